import { execFileSync } from 'node:child_process';
import path from 'node:path';

/**
 * cantools (with python-can) as the reference the DBC tests compare with, from the virtualenv that
 * infra/can-tools.sh installs (`./platform test` installs it up front; a first call elsewhere
 * installs it, about 15 s). A test that needs it fails, naming the script, when it cannot be had.
 */

const REPO = path.resolve(__dirname, '../../..');
const INSTALL = path.join(REPO, 'infra/can-tools.sh');

let python: string | undefined;

/** The python of the can-tools virtualenv, installing it the first time. */
export function cantoolsPython(): string {
  if (python === undefined) {
    try {
      python = execFileSync('bash', [INSTALL, 'path'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
      }).trim();
    } catch (err) {
      const stderr = (err as { stderr?: string }).stderr ?? String(err);
      throw new Error(`cantools is needed: infra/can-tools.sh install failed: ${stderr.trim()}`, {
        cause: err,
      });
    }
  }
  return python;
}

/** Runs tools/can/<script> with the can-tools python and returns its stdout. */
export function runCanTool(script: string, args: string[]): string {
  return execFileSync(cantoolsPython(), [path.join(REPO, 'tools/can', script), ...args], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
}

import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { loadConfig, type AppConfig } from '../core/config';

export const REPO_ROOT = path.resolve(__dirname, '..');

let stackEnv: Record<string, string> | undefined;

/**
 * The APP_* variables pointing at the local stack, as `infra/stack.sh env` prints them. The test
 * command starts the stack first; tests never fall back to fakes when it is down: they fail.
 */
export function localStackEnv(): Record<string, string> {
  if (!stackEnv) {
    const out = execFileSync('bash', [path.join(REPO_ROOT, 'infra/stack.sh'), 'env'], { encoding: 'utf8' });
    stackEnv = Object.fromEntries(
      [...out.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, process.env[m[1]!] ?? m[2]!]),
    );
  }
  return stackEnv;
}

/** A test config on the local stack; `env` adds or overrides APP_* variables. */
export function testConfig(env: Record<string, string | undefined> = {}): AppConfig {
  return loadConfig({ ...localStackEnv(), APP_ENV: 'test', APP_LOG__LEVEL: 'silent', ...env });
}

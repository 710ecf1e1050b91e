import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { REPO_ROOT, localStackEnv } from './stack';

type WorkerMain = 'workers-cpu/main.ts' | 'workers-gpu/main.ts' | 'edge-agent/main.ts';

/**
 * A worker (or an edge agent) in a child process of its own, so a test can SIGKILL it mid-activity
 * as a crash would.
 */
export function spawnWorkerProcess(main: WorkerMain, env: Record<string, string>) {
  return spawnEntryProcess(main, env);
}

/**
 * One of the repository's entry points in a child process of its own, its stdout and stderr kept.
 * tsx's loader runs in that very process (not tsx's CLI, which forks a child that SIGKILL would
 * orphan).
 */
export function spawnEntryProcess(main: WorkerMain | 'api/server.ts', env: Record<string, string>) {
  const tsx = path.join(REPO_ROOT, 'node_modules/tsx/dist');
  const proc = spawn(
    process.execPath,
    [
      '--require',
      path.join(tsx, 'preflight.cjs'),
      '--import',
      pathToFileURL(path.join(tsx, 'loader.mjs')).href,
      path.join(REPO_ROOT, main),
    ],
    {
      env: { ...process.env, ...localStackEnv(), APP_ENV: 'test', APP_LOG__LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const exited = new Promise<NodeJS.Signals | number | null>((r) =>
    proc.once('exit', (code, signal) => r(signal ?? code)),
  );
  return { proc, exited, output: () => output };
}

/** Child processes for the adapter and capture tests: the real `canlab` binary and the frame sender. */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import path from 'node:path';

export const CANLAB_BIN = path.resolve(__dirname, '../../bin/canlab.js');
const TSX_CLI = require.resolve('tsx/cli');
const SENDER = path.resolve(__dirname, 'send-frames.ts');

export interface Child {
  proc: ChildProcessWithoutNullStreams;
  /** stdout and stderr so far. */
  output(): string;
  /** Resolves once the output matches `pattern` (rejects after `timeoutMs`). */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpMatchArray>;
  /** Resolves with the exit code. */
  exited: Promise<number | null>;
}

const running = new Set<ChildProcessWithoutNullStreams>();

/** Kills children a failed test left running (call from afterEach). */
export function killLeftovers(): void {
  for (const proc of running) proc.kill('SIGKILL');
  running.clear();
}

export function startProcess(args: string[], env: NodeJS.ProcessEnv): Child {
  const proc = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: 'pipe' });
  running.add(proc);
  proc.on('exit', () => running.delete(proc));
  let text = '';
  const waiters = new Set<() => void>();
  const onData = (chunk: Buffer): void => {
    text += chunk.toString('utf8');
    for (const w of [...waiters]) w();
  };
  proc.stdout.on('data', onData);
  proc.stderr.on('data', onData);
  const exited = new Promise<number | null>((resolve) => proc.on('exit', (code) => resolve(code)));
  return {
    proc,
    output: () => text,
    exited,
    waitFor(pattern, timeoutMs = 30000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          const m = pattern.exec(text);
          if (m === null) return;
          waiters.delete(check);
          clearTimeout(timer);
          resolve(m);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`timed out waiting for ${pattern} in:\n${text}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
}

export function startCanlab(args: string[], env: NodeJS.ProcessEnv): Child {
  return startProcess([CANLAB_BIN, ...args], env);
}

/** Sends `count` known frames (see send-frames.ts) from a separate process; resolves when it is done. */
export async function sendFrames(
  backend: string,
  channel: string,
  count: number,
  env: NodeJS.ProcessEnv,
  intervalMs = 0,
): Promise<void> {
  const child = startProcess([TSX_CLI, SENDER, backend, channel, String(count), String(intervalMs)], env);
  const code = await child.exited;
  if (code !== 0) throw new Error(`sender exited ${code}: ${child.output()}`);
}

/** Frame i as send-frames.ts puts it on the bus. */
export function sentFrame(i: number): { id: number; data: number[] } {
  return { id: 0x100 + (i % 4), data: [i & 0xff, i >> 8, 0xa5, 0, 0, 0, 0, 0x5a] };
}

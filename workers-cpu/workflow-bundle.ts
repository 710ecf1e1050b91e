import { fork } from 'node:child_process';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';

/**
 * The workflow bundle of workers-cpu, built by webpack in a child process. Bundled inside the
 * worker, webpack's heap stays resident for the worker's whole life (some 80 MB of an idle
 * worker's 345 MB: V8 and the allocator never hand it back); in a child it ends with the child.
 * Temporal recommends a pre-built bundle for production; building it at start keeps it in step
 * with the code without a build step.
 */
export const WORKFLOWS_PATH = require.resolve('../workflows');

export function bundleWorkflowsApart(): Promise<string> {
  return new Promise((resolve, reject) => {
    // The child runs this very file under the worker's loader (tsx) and flags, but not its
    // debugger, whose port the worker holds.
    const child = fork(__filename, [], {
      execArgv: process.execArgv.filter((arg) => !arg.startsWith('--inspect')),
      stdio: ['ignore', 'inherit', 'pipe', 'ipc'],
    });
    let stderr = '';
    let code: string | undefined;
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
    child.once('message', (message: { code: string }) => (code = message.code));
    child.once('error', reject);
    child.once('exit', (status) =>
      code !== undefined && status === 0
        ? resolve(code)
        : reject(new Error(`bundling the workflows failed (exit ${status}):\n${stderr.slice(-4000)}`)),
    );
  });
}

if (require.main === module)
  void bundleWorkflowCode({ workflowsPath: WORKFLOWS_PATH, logger: new DefaultLogger('WARN') }).then(
    ({ code }) => process.send!({ code }, () => process.exit(0)),
    (err: unknown) => {
      console.error(err);
      process.exit(1);
    },
  );

import type { Worker } from '@temporalio/worker';
import type { Logger } from 'pino';

/** A worker process as its main.ts starts it: built, then run until shut down. */
export interface WorkerProcess {
  worker: Worker;
  /** Polls until the worker shuts down (SIGTERM, or `worker.shutdown()`), then releases everything it built. */
  run(): Promise<void>;
}

/**
 * Creates the worker over resources already built, releasing them if it cannot be created, and
 * runs it until shutdown, releasing them afterwards.
 */
export async function workerProcess(opts: {
  name: string;
  logger: Logger;
  /** What the polling line of the log says about the worker (its task queue, device …). */
  polling: { fields: Record<string, unknown>; message: string };
  create: () => Promise<Worker>;
  release: () => Promise<void>;
}): Promise<WorkerProcess> {
  let worker: Worker;
  try {
    worker = await opts.create();
  } catch (err) {
    await opts.release();
    throw err;
  }
  return {
    worker,
    async run() {
      opts.logger.info(opts.polling.fields, opts.polling.message);
      try {
        await worker.run();
        opts.logger.info(`${opts.name} stopped`);
      } finally {
        await opts.release();
      }
    },
  };
}

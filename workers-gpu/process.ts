import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { AppConfig } from '../core/config';
import { createGpuActivities } from '../activities';
import { createDb } from '../activities/db';
import { residentClosedSetDetector } from '../activities/detect/closed-set';
import { createObjectStore } from '../activities/storage/object-store';
import { createEventHub } from '../runtime/event-hub';
import { workerProcess, type WorkerProcess } from '../runtime/worker-process';
import { acquireGpuSlotLock, createGpuWorker } from './worker';

/**
 * Everything workers-gpu builds, in one place, so the integration tests start the worker exactly as
 * production does (an event hub forgotten here would silence auto-label events for every user).
 */
export async function startGpuWorkerProcess(config: AppConfig, logger: Logger): Promise<WorkerProcess> {
  const lock = await acquireGpuSlotLock(config.database.url, config.workers.gpuDevice);
  const db = createDb(config.database.url, { maxConnections: 3 });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // Auto-label events (started, progress, completed) reach the API's SSE clients through PostgreSQL NOTIFY.
  const events = await createEventHub(config.database.url, logger);
  // Loaded now and kept: sessions start without loading the model. One that is missing or unfit is
  // only a warning here; each auto-label session then refuses by name until it is there.
  const closedSet = residentClosedSetDetector(config);
  closedSet.acquire().then(
    (d) => logger.info({ model: d.model, device: config.models.device }, 'closed-set model loaded'),
    (err: unknown) =>
      logger.warn(
        { err: (err as Error).message },
        'closed-set model not loaded; auto-label sessions will be refused until it is there',
      ),
  );
  return workerProcess({
    name: 'workers-gpu',
    logger,
    polling: {
      fields: { taskQueue: config.temporal.gpuTaskQueue, device: config.workers.gpuDevice },
      message: 'workers-gpu polling with one slot',
    },
    create: () =>
      createGpuWorker({
        connection,
        config,
        activities: createGpuActivities({
          config,
          db,
          storage: createObjectStore(config.storage),
          events,
          closedSet,
        }),
      }),
    release: async () => {
      await closedSet.close();
      await connection.close();
      await events.close();
      await db.$disconnect();
      await lock.end();
    },
  });
}

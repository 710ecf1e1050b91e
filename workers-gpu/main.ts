import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../core/config';
import { createGpuActivities } from '../activities';
import { createDb } from '../activities/db';
import { residentClosedSetDetector } from '../activities/detect/closed-set';
import { createObjectStore } from '../activities/storage/object-store';
import { acquireGpuSlotLock, createGpuWorker } from './worker';

/** workers-gpu: the single slot of task queue `gpu` for device APP_WORKERS__GPU_DEVICE (default 0). */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.log.level, name: 'workers-gpu' });
  const lock = await acquireGpuSlotLock(config.database.url, config.workers.gpuDevice);
  const db = createDb(config.database.url, { maxConnections: 3 });
  const connection = await NativeConnection.connect({ address: config.temporal.address });
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
  try {
    const worker = await createGpuWorker({
      connection,
      config,
      activities: createGpuActivities({ config, db, storage: createObjectStore(config.storage), closedSet }),
    });
    logger.info(
      { taskQueue: config.temporal.gpuTaskQueue, device: config.workers.gpuDevice },
      'workers-gpu polling with one slot',
    );
    await worker.run();
    logger.info('workers-gpu stopped');
  } finally {
    await closedSet.close();
    await connection.close();
    await db.$disconnect();
    await lock.end();
  }
}

main().catch((err: unknown) => {
  console.error(`workers-gpu failed: ${(err as Error).message}`);
  process.exit(1);
});

import { NativeConnection } from '@temporalio/worker';
import pino from 'pino';
import { loadConfig } from '../core/config';
import { createCpuActivities } from '../activities';
import { createDb } from '../activities/db';
import { createObjectStore } from '../activities/storage/object-store';
import { createEventHub } from '../api/events/event-hub';
import { createCpuWorker } from './worker';

/** workers-cpu: polls task queue `cpu` until SIGINT/SIGTERM, then drains and exits (the SDK's Runtime handles the signals). */
async function main(): Promise<void> {
  const config = loadConfig(process.env);
  const logger = pino({ level: config.log.level, name: 'workers-cpu' });
  const db = createDb(config.database.url);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // Job events (ingest progress) reach the API's SSE clients through PostgreSQL NOTIFY.
  const events = await createEventHub(config.database.url, logger);
  try {
    const worker = await createCpuWorker({
      connection,
      config,
      activities: createCpuActivities({ config, db, storage: createObjectStore(config.storage), events }),
    });
    logger.info({ taskQueue: config.temporal.cpuTaskQueue }, 'workers-cpu polling');
    await worker.run();
    logger.info('workers-cpu stopped');
  } finally {
    await connection.close();
    await events.close();
    await db.$disconnect();
  }
}

main().catch((err: unknown) => {
  console.error('workers-cpu failed:', err);
  process.exit(1);
});

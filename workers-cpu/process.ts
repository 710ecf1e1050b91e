import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import type { Logger } from 'pino';
import type { AppConfig } from '../core/config';
import { createCpuActivities } from '../activities';
import { createDb } from '../activities/db';
import { ensureRetentionSchedule } from '../activities/govern/retention';
import { ensureWebhookDispatcher } from '../activities/webhooks/dispatcher';
import { createObjectStore } from '../activities/storage/object-store';
import { createEventHub } from '../runtime/event-hub';
import { workerProcess, type WorkerProcess } from '../runtime/worker-process';
import { createCpuWorker } from './worker';
import { bundleWorkflowsApart } from './workflow-bundle';

/** Everything workers-cpu builds, in one place, so the integration tests start it as production does. */
export async function startCpuWorkerProcess(config: AppConfig, logger: Logger): Promise<WorkerProcess> {
  const workflowBundle = await bundleWorkflowsApart();
  const db = createDb(config.database.url);
  const connection = await NativeConnection.connect({ address: config.temporal.address });
  // Job events (ingest progress) reach the API's SSE clients through PostgreSQL NOTIFY.
  const events = await createEventHub(config.database.url, logger);
  return workerProcess({
    name: 'workers-cpu',
    logger,
    polling: { fields: { taskQueue: config.temporal.cpuTaskQueue }, message: 'workers-cpu polling' },
    create: async () => {
      const worker = await createCpuWorker({
        connection,
        config,
        workflowBundle,
        activities: createCpuActivities({ config, db, storage: createObjectStore(config.storage), events }),
      });
      // The webhook outbox's one dispatcher runs wherever a cpu worker can run it (docs/webhooks.md).
      const client = new Client({ connection, namespace: config.temporal.namespace });
      await ensureWebhookDispatcher(client, config);
      // The retention sweep's schedule, kept as configured (docs/erasure.md).
      await ensureRetentionSchedule(client, config, logger);
      return worker;
    },
    release: async () => {
      await connection.close();
      await events.close();
      await db.$disconnect();
    },
  });
}

import type { Client } from '@temporalio/client';
import type { AppConfig } from '../../core/config';
import { WEBHOOK_DISPATCHER_ID } from '../../core/webhooks/delivery';

/**
 * Starts the webhook dispatcher unless it runs already (docs/webhooks.md "Who starts it"). Every
 * cpu worker calls this at start-up: wherever a worker can run the dispatcher, one exists, and a
 * second worker's start finds the first's run and leaves it. By type name: activities do not
 * import workflows.
 */
export async function ensureWebhookDispatcher(client: Client, config: AppConfig): Promise<void> {
  await client.workflow.start('webhookDispatcherWorkflow', {
    taskQueue: config.temporal.cpuTaskQueue,
    workflowId: WEBHOOK_DISPATCHER_ID,
    workflowIdConflictPolicy: 'USE_EXISTING',
    args: [],
  });
}

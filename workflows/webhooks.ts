import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import {
  ParentClosePolicy,
  continueAsNew,
  proxyActivities,
  sleep,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { AttemptOutcome, DueDelivery } from '../activities/webhooks';
import { webhookDeliveryWorkflowId } from '../core/webhooks/delivery';

const { findDueWebhookDeliveries } = proxyActivities<CpuActivities>({
  startToCloseTimeout: '30 seconds',
  // A database outage stalls the outbox; it never ends the dispatcher.
  retry: { maximumInterval: '1 minute' },
});

const { attemptWebhookDelivery } = proxyActivities<CpuActivities>({
  // One request (webhooks.timeoutSeconds, at most 60 s) and its bookkeeping.
  startToCloseTimeout: '2 minutes',
  // The receiver's failures are the workflow's to retry, with its backoff; these retries are for
  // the platform's own (a lost worker, the database).
  retry: { maximumInterval: '1 minute' },
});

/** Looks per run before the dispatcher continues as new, so its history stays short enough to read. */
const LOOKS_PER_RUN = 500;

/**
 * The one dispatcher of webhook deliveries (workflow id `webhook-dispatcher`, started by each
 * cpu worker at start-up, docs/webhooks.md): looks for due deliveries in the outbox that
 * emitEvent fills, and starts one delivery workflow for each. A delivery whose workflow is still
 * running is skipped (its id is taken), so a look may safely see a delivery twice.
 */
export async function webhookDispatcherWorkflow(): Promise<void> {
  for (let look = 0; look < LOOKS_PER_RUN && !workflowInfo().continueAsNewSuggested; look++) {
    const due = await findDueWebhookDeliveries();
    await Promise.all(due.deliveries.map(startDelivery));
    if (!due.more) await sleep(due.pollSeconds * 1000);
  }
  await continueAsNew<typeof webhookDispatcherWorkflow>();
}

async function startDelivery(delivery: DueDelivery): Promise<void> {
  try {
    await startChild(webhookDeliveryWorkflow, {
      workflowId: webhookDeliveryWorkflowId(delivery.deliveryId),
      args: [delivery],
      // A delivery outlives the dispatcher run that started it (continue-as-new closes that run).
      parentClosePolicy: ParentClosePolicy.ABANDON,
    });
  } catch (err) {
    if (!(err instanceof WorkflowExecutionAlreadyStartedError)) throw err;
  }
}

/**
 * One delivery (workflow id `webhook-delivery-<deliveryId>`): attempts until the receiver takes
 * it, the attempts run out or its webhook is disabled or deleted, sleeping the backoff between
 * attempts on a durable timer, so a retry due in hours survives worker restarts.
 */
export async function webhookDeliveryWorkflow(first: DueDelivery): Promise<AttemptOutcome> {
  let attempt = first.attempt;
  for (;;) {
    const outcome = await attemptWebhookDelivery({ deliveryId: first.deliveryId, attempt });
    if (outcome.status !== 'pending') return outcome;
    await sleep(outcome.retryInMs);
    attempt = outcome.attempt + 1;
  }
}

import { openSecret } from '../../core/sealed';
import {
  afterFailure,
  deliveryBody,
  disablesWebhook,
  isDelivered,
  isSettled,
  type SettledStatus,
} from '../../core/webhooks/delivery';
import { privateTargetsAllowed } from '../../core/webhooks/targets';
import type { Prisma, Webhook, WebhookDelivery } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { emitEvent } from '../events/emit';
import { sendSigned, type SendResult } from './send';

/** Deliveries the dispatcher hands out per look; a full batch is followed by another look at once. */
const BATCH = 50;
/**
 * An attempt under way keeps its delivery out of the dispatcher's hands this much longer than a
 * request may take; should its workflow vanish, the delivery is picked up again after it.
 */
const LEASE_MARGIN_MS = 60_000;
const MAX_ERROR = 500;

export interface DueDelivery {
  deliveryId: string;
  /** The attempt that is due (1-based). */
  attempt: number;
}

export interface DueDeliveries {
  deliveries: DueDelivery[];
  /** More were due than one batch holds. */
  more: boolean;
  /** How long the dispatcher sleeps before the next look (config, read at each look). */
  pollSeconds: number;
}

/** A delivery after an attempt: `pending` says when the next one is due; `gone` is a deleted webhook's. */
export type AttemptOutcome =
  | { status: 'pending'; attempt: number; retryInMs: number; error: string | null }
  | { status: SettledStatus | 'gone'; attempt: number };

function errorOf(r: SendResult): string | null {
  if (r.status === null) return r.error.slice(0, MAX_ERROR);
  if (isDelivered(r.status)) return null;
  return `HTTP ${r.status}: ${r.excerpt}`.trim().slice(0, MAX_ERROR);
}

/** The activities of the webhook workflows (docs/webhooks.md), on the `cpu` queue. */
export function createWebhookActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const settings = config.webhooks;

  /** Where a delivery stands as its row says, for an attempt that finds it already settled. */
  const outcomeOf = (row: WebhookDelivery | null, attempt: number): AttemptOutcome => {
    if (!row) return { status: 'gone', attempt };
    if (isSettled(row.status)) return { status: row.status, attempt: row.attempts };
    const due = row.nextAttemptAt ? row.nextAttemptAt.getTime() - Date.now() : 0;
    return { status: 'pending', attempt: row.attempts, retryInMs: Math.max(0, due), error: row.lastError };
  };

  /**
   * A delivery that used up its attempts: counts against its webhook, which is disabled (its
   * pending deliveries abandoned, its owner notified through the `webhook.disabled` event) once
   * that makes webhooks.failuresBeforeDisabling in a row.
   */
  const countFailure = async (tx: Prisma.TransactionClient, hook: Webhook, lastError: string | null) => {
    // Under the webhook's row lock: concurrent failures are counted one after another.
    const counted = await tx.webhook.update({
      where: { id: hook.id },
      data: { consecutiveFailures: { increment: 1 } },
    });
    if (!counted.enabled || !disablesWebhook(counted.consecutiveFailures, settings)) return;
    const reason = `${counted.consecutiveFailures} deliveries in a row failed every attempt; last error: ${lastError ?? 'none'}`;
    await tx.webhook.update({
      where: { id: hook.id },
      data: { enabled: false, disabledAt: new Date(), disabledReason: reason.slice(0, MAX_ERROR) },
    });
    await tx.webhookDelivery.updateMany({
      where: { webhookId: hook.id, status: 'pending' },
      data: { status: 'abandoned', nextAttemptAt: null, lastError: 'the webhook was disabled' },
    });
    await emitEvent(tx, {
      kind: 'webhook.disabled',
      subjectType: 'webhook',
      subjectId: hook.id,
      payload: {
        webhook_id: hook.id,
        url: hook.url,
        owner_id: hook.ownerId,
        consecutive_failures: counted.consecutiveFailures,
        last_error: lastError,
      },
    });
  };

  return {
    /** The pending deliveries whose attempt is due, oldest first: the dispatcher starts a workflow for each. */
    async findDueWebhookDeliveries(): Promise<DueDeliveries> {
      const rows = await db.webhookDelivery.findMany({
        where: { status: 'pending', nextAttemptAt: { lte: new Date() } },
        orderBy: { nextAttemptAt: 'asc' },
        take: BATCH + 1,
        select: { id: true, attempts: true },
      });
      return {
        deliveries: rows.slice(0, BATCH).map((r) => ({ deliveryId: r.id, attempt: r.attempts + 1 })),
        more: rows.length > BATCH,
        pollSeconds: settings.pollSeconds,
      };
    },

    /**
     * Makes one attempt of a delivery: signs and POSTs the event, records the answer in the
     * delivery log and says what follows (another attempt after the backoff, or the end). An
     * attempt already recorded (this activity retried after it committed) is not made twice.
     */
    async attemptWebhookDelivery(input: DueDelivery): Promise<AttemptOutcome> {
      const row = await db.webhookDelivery.findUnique({
        where: { id: input.deliveryId },
        include: { webhook: true },
      });
      if (!row || row.status !== 'pending' || row.attempts >= input.attempt)
        return outcomeOf(row, input.attempt);
      const { webhook } = row;
      if (!webhook.enabled) {
        await db.webhookDelivery.updateMany({
          where: { id: row.id, status: 'pending' },
          data: { status: 'abandoned', nextAttemptAt: null, lastError: 'the webhook was disabled' },
        });
        return { status: 'abandoned', attempt: row.attempts };
      }
      const attempt = row.attempts + 1;
      const timeoutMs = settings.timeoutSeconds * 1000;
      await db.webhookDelivery.update({
        where: { id: row.id },
        data: { nextAttemptAt: new Date(Date.now() + timeoutMs + LEASE_MARGIN_MS) },
      });
      const event = await db.platformEvent.findUniqueOrThrow({ where: { id: row.eventId } });
      const result = await sendSigned({
        url: webhook.url,
        messageId: row.id,
        body: deliveryBody(event),
        secret: openSecret(config.auth.sealingKey, webhook.secretCipher),
        timeoutMs,
        allowPrivate: privateTargetsAllowed(config),
      });
      const delivered = result.status !== null && isDelivered(result.status);
      const error = errorOf(result);
      const next = delivered ? null : afterFailure(attempt, settings);
      const now = new Date();
      return db.$transaction(async (tx) => {
        // The webhook's row before its delivery's, in the order a delete takes them: no deadlock.
        const locked = await tx.$queryRaw<
          unknown[]
        >`SELECT 1 FROM webhooks WHERE id = ${webhook.id}::uuid FOR UPDATE`;
        if (!locked.length) return { status: 'gone', attempt };
        // Only over the attempt this call read: a delivery abandoned or deleted meanwhile stays so.
        const recorded = await tx.webhookDelivery.updateMany({
          where: { id: row.id, status: 'pending', attempts: row.attempts },
          data: {
            attempts: attempt,
            lastStatus: result.status,
            lastError: error,
            ...(next === null
              ? { status: 'delivered', deliveredAt: now, nextAttemptAt: null }
              : next.status === 'failed'
                ? { status: 'failed', nextAttemptAt: null }
                : { nextAttemptAt: new Date(now.getTime() + next.retryInSeconds * 1000) }),
          },
        });
        if (recorded.count === 0)
          return outcomeOf(await tx.webhookDelivery.findUnique({ where: { id: row.id } }), attempt);
        if (next === null) {
          await tx.webhook.updateMany({ where: { id: webhook.id }, data: { consecutiveFailures: 0 } });
          return { status: 'delivered', attempt };
        }
        if (next.status === 'failed') {
          await countFailure(tx, webhook, error);
          return { status: 'failed', attempt };
        }
        return { status: 'pending', attempt, retryInMs: next.retryInSeconds * 1000, error };
      });
    },
  };
}

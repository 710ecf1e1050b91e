import type { AppConfig } from '../config';

/**
 * The pure parts of a webhook delivery (docs/webhooks.md): its workflow ids, its message, its
 * retries. Imported by workflow code too, so nothing here may reach a Node built-in.
 */

type WebhookSettings = Pick<
  AppConfig['webhooks'],
  'maxAttempts' | 'backoffBaseSeconds' | 'backoffFactor' | 'backoffMaxSeconds' | 'failuresBeforeDisabling'
>;

/** Where a delivery stands (webhook_deliveries.status). */
export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed', 'abandoned'] as const;
export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
export type SettledStatus = Exclude<DeliveryStatus, 'pending'>;
export const isDeliveryStatus = (status: string): status is DeliveryStatus =>
  (DELIVERY_STATUSES as readonly string[]).includes(status);
/** A delivery that is no longer attempted. */
export const isSettled = (status: string): status is SettledStatus =>
  status !== 'pending' && isDeliveryStatus(status);

/** The one dispatcher workflow (docs/webhooks.md "Workflows"). */
export const WEBHOOK_DISPATCHER_ID = 'webhook-dispatcher';
/** One delivery's workflow: one at a time per delivery, whoever starts it. */
export const webhookDeliveryWorkflowId = (deliveryId: string) => `webhook-delivery-${deliveryId}`;

export interface EventForDelivery {
  id: string;
  kind: string;
  subjectType: string;
  subjectId: string | null;
  actorId: string | null;
  payload: unknown;
  createdAt: Date;
}

/**
 * The body every receiver gets, in the Standard Webhooks payload shape (`type`, `timestamp`,
 * `data`); `data` carries the event as the notifications carry it. The same bytes on every attempt.
 */
export const deliveryBody = (event: EventForDelivery): string =>
  JSON.stringify({
    type: event.kind,
    timestamp: event.createdAt.toISOString(),
    data: {
      event_id: event.id,
      subject_type: event.subjectType,
      subject_id: event.subjectId,
      actor_id: event.actorId,
      payload: event.payload,
    },
  });

/** The wait after failed attempt `attempt` (1-based): min(base × factor^(attempt−1), max) seconds. */
export const retryDelaySeconds = (attempt: number, s: WebhookSettings): number =>
  Math.min(s.backoffBaseSeconds * s.backoffFactor ** (attempt - 1), s.backoffMaxSeconds);

/** What follows a failed attempt: another after a wait, or the delivery is given up. */
export function afterFailure(
  attempt: number,
  s: WebhookSettings,
): { status: 'pending'; retryInSeconds: number } | { status: 'failed' } {
  return attempt >= s.maxAttempts
    ? { status: 'failed' }
    : { status: 'pending', retryInSeconds: retryDelaySeconds(attempt, s) };
}

/** A receiver is disabled once this many deliveries in a row used up every attempt. */
export const disablesWebhook = (consecutiveFailures: number, s: WebhookSettings): boolean =>
  consecutiveFailures >= s.failuresBeforeDisabling;

/** A 2xx answer is a delivery (Standard Webhooks); redirects are not followed, so they fail. */
export const isDelivered = (status: number): boolean => status >= 200 && status < 300;

import { sourceLocation } from '../../../activities/sources';
import type { WebhookWithLog } from '../../../activities/webhooks/registry';
import type { IntegrationSource, Webhook, WebhookDelivery } from '../../../generated/prisma/client';

/** A webhook as every answer gives it: never its secret, which only its creation answers. */
export const webhookOut = (w: Webhook) => ({
  id: w.id,
  url: w.url,
  kinds: w.kinds,
  description: w.description,
  owner_id: w.ownerId,
  enabled: w.enabled,
  disabled_at: w.disabledAt?.toISOString() ?? null,
  disabled_reason: w.disabledReason,
  consecutive_failures: w.consecutiveFailures,
  created_at: w.createdAt.toISOString(),
});

/** One line of a webhook's delivery log. */
export const deliveryOut = (d: WebhookDelivery) => ({
  id: d.id,
  event_id: d.eventId,
  kind: d.kind,
  status: d.status,
  attempts: d.attempts,
  last_status: d.lastStatus,
  last_error: d.lastError,
  next_attempt_at: d.nextAttemptAt?.toISOString() ?? null,
  delivered_at: d.deliveredAt?.toISOString() ?? null,
  created_at: d.createdAt.toISOString(),
  updated_at: d.updatedAt.toISOString(),
});

export const webhookWithLogOut = (w: WebhookWithLog) => ({
  ...webhookOut(w),
  delivery_counts: w.counts,
  deliveries: w.deliveries.map(deliveryOut),
});

/** A source as every answer gives it: its location, never its secret access key. */
export const sourceOut = (s: IntegrationSource) => ({
  id: s.id,
  name: s.name,
  kind: s.kind,
  ...sourceLocation(s),
  created_by: s.createdBy,
  created_at: s.createdAt.toISOString(),
});

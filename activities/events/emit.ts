import type { Prisma } from '../../generated/prisma/client';
import { ALL_EVENT_KINDS, type EventKind } from '../../core/events/catalogue';
import type { Db } from '../db';

export interface PlatformEventIn {
  kind: EventKind;
  subjectType: string;
  subjectId?: string | null;
  actorId?: string | null;
  payload?: Prisma.InputJsonValue;
}

/**
 * Records a domain event and, in the same transaction when the caller passes one, a pending
 * delivery for every enabled webhook subscribed to its kind: the outbox the delivery workflow
 * drains (docs/webhooks.md), so an event is never delivered without having been recorded, nor
 * recorded without its deliveries.
 */
export async function emitEvent(db: Db | Prisma.TransactionClient, event: PlatformEventIn) {
  const row = await db.platformEvent.create({
    data: {
      kind: event.kind,
      subjectType: event.subjectType,
      subjectId: event.subjectId ?? null,
      actorId: event.actorId ?? null,
      payload: event.payload ?? {},
    },
  });
  const hooks = await db.webhook.findMany({
    where: { enabled: true, kinds: { hasSome: [event.kind, ALL_EVENT_KINDS] } },
    select: { id: true },
  });
  if (hooks.length)
    await db.webhookDelivery.createMany({
      data: hooks.map((h) => ({
        webhookId: h.id,
        eventId: row.id,
        kind: event.kind,
        nextAttemptAt: row.createdAt,
      })),
    });
  return row;
}

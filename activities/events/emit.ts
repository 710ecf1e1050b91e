import { randomUUID } from 'node:crypto';
import type { PlatformEvent, Prisma } from '../../generated/prisma/client';
import { ALL_EVENT_KINDS, type EventKind } from '../../core/events/catalogue';
import type { Db } from '../db';
import { notifyFor } from './notify';

export interface PlatformEventIn {
  kind: EventKind;
  subjectType: string;
  subjectId?: string | null;
  actorId?: string | null;
  payload?: Prisma.InputJsonValue;
  /**
   * A fixed id (core/events/notify.ts `onceEventId`) for an event that must be recorded at most
   * once though its emitter may run again (a retried activity): the second emit records nothing.
   */
  id?: string;
}

// A transaction client has $transaction too (Prisma 7), but no $connect: only the root client does.
const isRootClient = (db: Db | Prisma.TransactionClient): db is Db => '$connect' in db;

/**
 * Records a domain event and, in the same transaction (the caller's when it passes one), a
 * pending delivery for every enabled webhook subscribed to its kind (the outbox the delivery
 * workflow drains, docs/webhooks.md) and the notifications its catalogue entry's audience gets
 * (docs/events.md). So an event is never delivered or notified without having been recorded, nor
 * recorded without its deliveries and notifications.
 */
export async function emitEvent(
  db: Db | Prisma.TransactionClient,
  event: PlatformEventIn,
): Promise<PlatformEvent> {
  if (isRootClient(db))
    return db.$transaction((tx) => emitEvent(tx, event), { maxWait: 10_000, timeout: 30_000 });
  const id = event.id ?? randomUUID();
  // ON CONFLICT DO NOTHING waits for a concurrent emit of the same id, then yields to it.
  const [row] = await db.platformEvent.createManyAndReturn({
    data: [
      {
        id,
        kind: event.kind,
        subjectType: event.subjectType,
        subjectId: event.subjectId ?? null,
        actorId: event.actorId ?? null,
        payload: event.payload ?? {},
      },
    ],
    skipDuplicates: true,
  });
  if (!row) return db.platformEvent.findUniqueOrThrow({ where: { id } });
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
  await notifyFor(db, row);
  return row;
}

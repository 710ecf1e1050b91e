import { eventKindInfo, type AudienceRole } from '../../core/events/catalogue';
import { namedRecipients, notificationTitle } from '../../core/events/notify';
import type { Notification, PlatformEvent, Prisma, Role } from '../../generated/prisma/client';
import { EVENT_HUB_CHANNEL, MAX_EVENT_BYTES, encodeStreamEvent } from '../../runtime/event-hub';

/** The roles of each audience group: the reviewer group is reviewers and admins. */
const GROUP_ROLES: Record<AudienceRole, Role[]> = { reviewer: ['reviewer', 'admin'], admin: ['admin'] };

/** A notification as the inbox routes and the notifications stream give it. */
export const notificationOut = (n: Notification) => ({
  id: n.id,
  kind: n.kind,
  title: n.title,
  body: n.body,
  read: n.readAt !== null,
  read_at: n.readAt?.toISOString() ?? null,
  created_at: n.createdAt.toISOString(),
});

/** The stream message of a notification, for its user's SSE streams; without its body when that is too big to relay. */
function streamMessage(n: Notification): string {
  const data = { user_id: n.userId, ...notificationOut(n) };
  const whole = encodeStreamEvent('notifications', 'notification', data);
  if (Buffer.byteLength(whole) <= MAX_EVENT_BYTES) return whole;
  return encodeStreamEvent('notifications', 'notification', { ...data, body: null, body_omitted: true });
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * Writes the notifications of an event, per its catalogue entry's audience (docs/events.md): the
 * active users its payload names, and every active person of its role group; never the actor.
 * Each is announced on the notifications stream by a NOTIFY inside the same transaction, so it
 * reaches every API process's SSE clients exactly when it commits, and never if it rolls back.
 */
export async function notifyFor(tx: Prisma.TransactionClient, event: PlatformEvent): Promise<Notification[]> {
  const info = eventKindInfo(event.kind);
  if (!info?.notifies) return [];
  const payload = isRecord(event.payload) ? event.payload : {};
  const named = namedRecipients(info, payload, event.actorId);
  const group = info.notifies.role;
  if (!named.length && !group) return [];
  const users = await tx.user.findMany({
    where: {
      disabledAt: null,
      OR: [
        ...(named.length ? [{ id: { in: named } }] : []),
        // A service account acts for a system, it does not belong to a group of people.
        ...(group ? [{ kind: 'person', role: { in: GROUP_ROLES[group] } }] : []),
      ],
      ...(event.actorId ? { NOT: { id: event.actorId } } : {}),
    },
    select: { id: true },
  });
  if (!users.length) return [];
  const title = notificationTitle(info, payload);
  const body = {
    event_id: event.id,
    subject_type: event.subjectType,
    subject_id: event.subjectId,
    actor_id: event.actorId,
    payload,
  } as Prisma.InputJsonObject;
  const rows = await tx.notification.createManyAndReturn({
    data: users.map((u) => ({ userId: u.id, kind: event.kind, title, body })),
  });
  const messages = rows.map(streamMessage);
  await tx.$executeRaw`SELECT pg_notify(${EVENT_HUB_CHANNEL}, m) FROM unnest(${messages}::text[]) AS m`;
  return rows;
}

import { InputError, NotFoundError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { notificationOut } from '../events/notify';

/** A user's inbox (docs/inbox.md): only ever the caller's own notifications. */

export const unreadCount = (db: Db, userId: string) =>
  db.notification.count({ where: { userId, readAt: null } });

/** Newest first (ties by id), paged by the last id of the page before; `unread` filters either way. */
export async function listNotifications(
  db: Db,
  userId: string,
  query: { unread?: boolean | undefined; limit: number; cursor?: string | undefined },
) {
  if (query.cursor && !(await db.notification.findFirst({ where: { id: query.cursor, userId } })))
    throw new InputError('the cursor names no notification of yours', [
      { field: 'query.cursor', message: 'not a next_cursor of this list' },
    ]);
  const where: Prisma.NotificationWhereInput = {
    userId,
    ...(query.unread === undefined ? {} : { readAt: query.unread ? null : { not: null } }),
  };
  const [rows, unread] = await Promise.all([
    db.notification.findMany({
      where,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      ...idCursorArgs(query),
    }),
    unreadCount(db, userId),
  ]);
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(notificationOut), next_cursor, unread };
}

/** Marks one of the user's notifications read (a second call keeps the first time); another user's is not found. */
export async function markRead(db: Db, userId: string, id: string) {
  await db.notification.updateMany({ where: { id, userId, readAt: null }, data: { readAt: new Date() } });
  const n = await db.notification.findFirst({ where: { id, userId } });
  if (!n) throw new NotFoundError(`no notification ${id}`);
  return notificationOut(n);
}

/** Marks every unread notification of the user read; how many were. */
export async function markAllRead(db: Db, userId: string): Promise<number> {
  const { count } = await db.notification.updateMany({
    where: { userId, readAt: null },
    data: { readAt: new Date() },
  });
  return count;
}

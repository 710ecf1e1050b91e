import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { bigintPage, SUMMARY_TOP, usersById, windowWhere, type IdPage, type TimeWindow } from './reads';

/** Who is being served original pixels, and from where. */
export interface PiiViewer {
  userId: string;
  ip?: string | null | undefined;
}

/**
 * Records that `viewer` was served the original, unredacted pixels of these frames through
 * `route` (its method and path template): one row per frame, however many crops of it the answer
 * held. Awaited before the pixels go out, so a view that cannot be recorded is not served.
 */
export async function recordPiiAccess(
  db: Db,
  viewer: PiiViewer,
  route: string,
  frames: ReadonlyArray<{ id: string; sessionId: string }>,
): Promise<void> {
  const unique = [...new Map(frames.map((f) => [f.id, f])).values()];
  if (!unique.length) return;
  await db.piiAccess.createMany({
    data: unique.map((f) => ({
      userId: viewer.userId,
      frameId: f.id,
      sessionId: f.sessionId,
      route,
      ip: viewer.ip ?? null,
    })),
  });
}

export interface PiiAccessFilter extends TimeWindow {
  userId?: string | undefined;
  frameId?: string | undefined;
  sessionId?: string | undefined;
}

/** Views of original pixels, newest first, with who viewed. */
export async function listPiiAccess(db: Db, filter: PiiAccessFilter, paging: IdPage) {
  const rows = await db.piiAccess.findMany({
    where: {
      ...(filter.userId ? { userId: filter.userId } : {}),
      ...(filter.frameId ? { frameId: filter.frameId } : {}),
      ...(filter.sessionId ? { sessionId: filter.sessionId } : {}),
      ...windowWhere(filter),
      ...(paging.cursor ? { id: { lt: paging.cursor } } : {}),
    },
    orderBy: { id: 'desc' },
    take: paging.limit + 1,
  });
  const { page, next_cursor } = bigintPage(rows, paging.limit);
  const users = await usersById(
    db,
    page.map((r) => r.userId),
  );
  return {
    items: page.map((r) => ({
      id: r.id.toString(),
      user_id: r.userId,
      user: users.get(r.userId) ?? null,
      frame_id: r.frameId,
      session_id: r.sessionId,
      route: r.route,
      ip: r.ip,
      created_at: r.createdAt.toISOString(),
    })),
    next_cursor,
  };
}

/**
 * Over a window: how many views of original pixels, of how many frames, by how many people; per
 * person (the most views first) and per route.
 */
export async function piiAccessSummary(db: Db, filter: TimeWindow & { sessionId?: string | undefined }) {
  const conds = [Prisma.sql`TRUE`];
  if (filter.since) conds.push(Prisma.sql`created_at >= ${filter.since}`);
  if (filter.until) conds.push(Prisma.sql`created_at < ${filter.until}`);
  if (filter.sessionId) conds.push(Prisma.sql`session_id = ${filter.sessionId}::uuid`);
  const where = Prisma.join(conds, ' AND ');
  const [totals, byUser, byRoute] = await Promise.all([
    db.$queryRaw<Array<{ views: number; frames: number; sessions: number; users: number }>>`
      SELECT count(*)::int AS views, count(DISTINCT frame_id)::int AS frames,
             count(DISTINCT session_id)::int AS sessions, count(DISTINCT user_id)::int AS users
        FROM pii_access_log WHERE ${where}`,
    db.$queryRaw<
      Array<{
        user_id: string;
        views: number;
        frames: number;
        sessions: number;
        first_at: Date;
        last_at: Date;
      }>
    >`
      SELECT user_id::text, count(*)::int AS views, count(DISTINCT frame_id)::int AS frames,
             count(DISTINCT session_id)::int AS sessions, min(created_at) AS first_at, max(created_at) AS last_at
        FROM pii_access_log WHERE ${where}
       GROUP BY user_id ORDER BY views DESC, user_id LIMIT ${SUMMARY_TOP}`,
    db.$queryRaw<Array<{ route: string; views: number }>>`
      SELECT route, count(*)::int AS views FROM pii_access_log WHERE ${where}
       GROUP BY route ORDER BY views DESC, route`,
  ]);
  const users = await usersById(
    db,
    byUser.map((u) => u.user_id),
  );
  return {
    ...totals[0]!,
    by_user: byUser.map((u) => ({
      user_id: u.user_id,
      user: users.get(u.user_id) ?? null,
      views: u.views,
      frames: u.frames,
      sessions: u.sessions,
      first_at: u.first_at.toISOString(),
      last_at: u.last_at.toISOString(),
    })),
    by_route: byRoute,
  };
}

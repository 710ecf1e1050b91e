import type { Db } from '../db';

/**
 * What the activity and PII-access reads share (docs/inbox.md). Both logs are ordered by their
 * bigint id, which follows commit order more closely than `created_at` (a transaction's start),
 * and paged by it.
 */

/** Most rows of each breakdown a summary gives, the largest first. */
export const SUMMARY_TOP = 100;

export interface TimeWindow {
  since?: Date | undefined;
  until?: Date | undefined;
}

export interface IdPage {
  limit: number;
  cursor?: bigint | undefined;
}

export const windowWhere = (w: TimeWindow) =>
  w.since || w.until
    ? { createdAt: { ...(w.since ? { gte: w.since } : {}), ...(w.until ? { lt: w.until } : {}) } }
    : {};

/** The people (or service accounts) rows name, for display beside their ids. */
export async function usersById(db: Db, ids: Iterable<string | null>) {
  const wanted = [...new Set([...ids].filter((id): id is string => id !== null))];
  const users = wanted.length
    ? await db.user.findMany({
        where: { id: { in: wanted } },
        select: { id: true, email: true, name: true, kind: true },
      })
    : [];
  return new Map(users.map((u) => [u.id, { email: u.email, name: u.name, kind: u.kind }]));
}

/** A page of rows read with `take: limit + 1`, and the cursor of the next page. */
export function bigintPage<T extends { id: bigint }>(rows: T[], limit: number) {
  const page = rows.slice(0, limit);
  return { page, next_cursor: rows.length > limit ? page[page.length - 1]!.id.toString() : null };
}

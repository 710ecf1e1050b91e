import { InputError } from '../../core/errors';
import { decodeCursor, encodeCursor } from '../../core/pagination';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/** The explore lists, newest first: which table, its key column, and what it is filtered by. */
const SOURCES = {
  evals: { table: 'eval_operations', key: 'id', where: Prisma.sql`op_type = 'explore_eval'` },
  projections: { table: 'explore_projections', key: 'id', where: Prisma.sql`TRUE` },
  views: { table: 'explore_views', key: 'slice_id', where: Prisma.sql`TRUE` },
} as const;

/** 0001-01-01T00:00:00Z: PostgreSQL has no year 0. */
const FIRST_INSTANT = -62_135_596_800_000;

export interface Page {
  limit: number;
  cursor?: string | undefined;
}

/**
 * One page of ids, newest first, by keyset (core/pagination.ts: creation time with microseconds,
 * then the key), as `GET /api/curation/slices` pages: rows that existed when paging began appear
 * once, and a row deleted meanwhile does not break the cursor.
 */
export async function newestFirst(
  db: Db,
  source: keyof typeof SOURCES,
  page: Page,
): Promise<{ ids: string[]; next_cursor: string | null }> {
  const { table, key, where } = SOURCES[source];
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  // A well-formed cursor may still name no instant (month 13, February 30, year 0): PostgreSQL would refuse the cast.
  const at = after ? Date.parse(after.createdAt) : 0;
  if (
    after &&
    (Number.isNaN(at) ||
      at < FIRST_INSTANT ||
      new Date(at).toISOString().slice(0, 19) !== after.createdAt.slice(0, 19))
  )
    throw new InputError('cursor is not one this API issued', [
      { field: 'query.cursor', message: 'malformed cursor' },
    ]);
  const t = Prisma.raw(table);
  const k = Prisma.raw(key);
  const keys = await db.$queryRaw<Array<{ id: string; key_at: string }>>`
    SELECT ${k}::text AS id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM ${t}
     WHERE ${where}
       ${after ? Prisma.sql`AND (created_at, ${k}) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty}
     ORDER BY created_at DESC, ${k} DESC
     LIMIT ${page.limit + 1}`;
  const shown = keys.slice(0, page.limit);
  const last = shown[shown.length - 1];
  return {
    ids: shown.map((r) => r.id),
    next_cursor:
      keys.length > page.limit && last ? encodeCursor({ createdAt: last.key_at, id: last.id }) : null,
  };
}

/** Rows in the order of `ids` (those still there). */
export const inOrder = <T>(ids: readonly string[], rows: readonly T[], keyOf: (row: T) => string): T[] => {
  const byId = new Map(rows.map((r) => [keyOf(r), r]));
  return ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
};

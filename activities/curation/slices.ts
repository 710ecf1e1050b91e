import { SlicePredicate, unmatchablePredicates } from '../../core/curation/slice';
import { NotFoundError } from '../../core/errors';
import { decodeCursor, encodeCursor } from '../../core/pagination';
import { Prisma, type Slice } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { checkPredicate, sliceQuery } from './slice-query';

export const sliceOut = (s: Pick<Slice, 'id' | 'name' | 'predicate' | 'createdBy' | 'createdAt'>) => ({
  id: s.id,
  name: s.name,
  predicate: s.predicate,
  created_by: s.createdBy,
  created_at: s.createdAt.toISOString(),
  unmatchable: unmatchablePredicates(s.predicate as SlicePredicate),
});

/** Saves a slice after checking what its predicate names exists (422 naming the unknown ones). */
export async function createSlice(
  db: Db,
  input: { name: string; predicate: SlicePredicate },
  actor: Pick<Actor, 'userId' | 'requestId'>,
): Promise<Slice> {
  await checkPredicate(db, input.predicate, 'body.predicate');
  return db.$transaction(async (tx) => {
    const slice = await tx.slice.create({
      data: {
        name: input.name,
        predicate: input.predicate as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'curation.slice.created',
      subjectType: 'slice',
      subjectId: slice.id,
      detail: { name: slice.name, predicate: input.predicate as Prisma.InputJsonValue },
      requestId: actor.requestId,
    });
    return slice;
  });
}

export async function findSlice(db: Db | Prisma.TransactionClient, id: string): Promise<Slice> {
  const slice = await db.slice.findUnique({ where: { id } });
  if (!slice) throw new NotFoundError(`no slice ${id}`);
  return slice;
}

/** A stored predicate, read back through the schema (it was validated when the slice was saved). */
export const slicePredicate = (slice: Slice): SlicePredicate => SlicePredicate.parse(slice.predicate);

/** Slices newest first by keyset (core/pagination.ts): rows that existed when paging began appear once. */
export async function listSlices(db: Db, page: { limit: number; cursor?: string }) {
  const after = page.cursor ? decodeCursor(page.cursor) : null;
  // The key is read as text with microseconds: a Date would round it to milliseconds.
  const keys = await db.$queryRaw<Array<{ id: string; key_at: string }>>`
    SELECT id::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM slices
     ${after ? Prisma.sql`WHERE (created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)` : Prisma.empty}
     ORDER BY created_at DESC, id DESC
     LIMIT ${page.limit + 1}`;
  const shown = keys.slice(0, page.limit);
  const rows = new Map(
    (await db.slice.findMany({ where: { id: { in: shown.map((k) => k.id) } } })).map((s) => [s.id, s]),
  );
  const last = shown[shown.length - 1];
  return {
    items: shown.flatMap((k) => (rows.has(k.id) ? [sliceOut(rows.get(k.id)!)] : [])),
    limit: page.limit,
    next_cursor:
      keys.length > page.limit && last ? encodeCursor({ createdAt: last.key_at, id: last.id }) : null,
  };
}

interface ItemRow {
  id: string;
  frame_id: string;
  session_id: string;
  frame_index: number;
  class_name: string;
  l0: string;
  l1: string;
  bbox: number[];
  rot_deg: number;
  state: string;
  source: string;
  conf: number | null;
}

/**
 * What a predicate selects: totals (objects, frames, sessions), objects per class and per state,
 * and one page of the objects in id order (`after`: the last object id of the previous page).
 */
export async function materializeSlice(
  db: Db,
  predicate: SlicePredicate,
  page: { limit: number; after?: string },
) {
  const q = sliceQuery(predicate);
  const [totals, byClass, byState, items] = await Promise.all([
    q.rows<{ objects: bigint; frames: bigint; sessions: bigint }>(
      db,
      () => `SELECT count(*) AS objects, count(DISTINCT o.frame_id) AS frames,
                    count(DISTINCT f.session_id) AS sessions
               FROM ${q.from} WHERE ${q.where}`,
    ),
    q.rows<{ class_name: string; l0: string; l1: string; n: bigint }>(
      db,
      () => `SELECT c.name AS class_name, c.l0, c.l1, count(*) AS n FROM ${q.from} WHERE ${q.where}
              GROUP BY c.id ORDER BY n DESC, c.name`,
    ),
    q.rows<{ state: string; n: bigint }>(
      db,
      () => `SELECT o.state, count(*) AS n FROM ${q.from} WHERE ${q.where} GROUP BY o.state ORDER BY o.state`,
    ),
    q.rows<ItemRow>(
      db,
      (param) => `SELECT o.id::text, o.frame_id::text, f.session_id::text, f.index AS frame_index,
                         c.name AS class_name, c.l0, c.l1, o.bbox, o.rot_deg, o.state, o.source, o.conf
                    FROM ${q.from}
                   WHERE ${q.where}${page.after ? ` AND o.id > ${param(page.after)}::uuid` : ''}
                   ORDER BY o.id LIMIT ${param(page.limit + 1)}::int`,
    ),
  ]);
  const shown = items.slice(0, page.limit);
  const t = totals[0]!;
  return {
    counts: {
      objects: Number(t.objects),
      frames: Number(t.frames),
      sessions: Number(t.sessions),
      by_class: byClass.map((c) => ({ class_name: c.class_name, l0: c.l0, l1: c.l1, count: Number(c.n) })),
      by_state: Object.fromEntries(byState.map((s) => [s.state, Number(s.n)])),
    },
    items: shown,
    limit: page.limit,
    next_cursor: items.length > page.limit ? shown[shown.length - 1]!.id : null,
    unmatchable: unmatchablePredicates(predicate),
  };
}

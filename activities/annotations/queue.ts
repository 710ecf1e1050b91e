import { decodeCursor, encodeCursor, uncertainty, rarity } from '../../core/review/ranking';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/** States an object waits in for a human verdict; the queue's default filter. */
export const QUEUE_DEFAULT_STATES = ['review', 'submitted'] as const;

export interface QueueFilter {
  sessionId: string | null;
  classId: number | null;
  states: readonly string[];
  cursor: string | null;
  limit: number;
}

interface QueueRow {
  id: string;
  frame_id: string;
  session_id: string;
  class_id: number;
  class_name: string;
  l1: string;
  conf: number | null;
  state: string;
  source: string;
  version: number;
  bbox: number[];
  class_count: bigint;
  total: bigint;
  paths: unknown;
  score: number;
}

/**
 * The queue's score of object `o` (`queueScore` in core/review/ranking.ts, in SQL), over the
 * class counts `d` and the store total `t` that QUEUE_CLASS_COUNTS defines; the explain route uses
 * the same pieces, so its score and position are the queue's own.
 */
export const QUEUE_SCORE_SQL = Prisma.sql`(CASE WHEN o.conf IS NULL THEN 1.0 ELSE 1.0 - abs(2.0 * least(1.0, greatest(0.0, o.conf)) - 1.0) END)
                  * (ln(1.0 + t.n::float8 / d.n::float8) / ln(1.0 + t.n::float8))`;

/** The CTEs `dist` (objects per class over the whole store) and `total` the score reads. */
export const QUEUE_CLASS_COUNTS = Prisma.sql`dist AS (SELECT class_id, count(*) AS n FROM objects GROUP BY class_id),
         total AS (SELECT coalesce(sum(n), 0) AS n FROM dist)`;

/**
 * The review queue ranked by uncertainty × class rarity (core/review/ranking.ts), computed in SQL
 * over the live class distribution of the whole store, keyset-paged by (score desc, id asc). The
 * SQL expression mirrors `queueScore`; test/review-queue.int.test.ts checks they agree.
 */
export async function reviewQueue(db: Db, f: QueueFilter) {
  const after = f.cursor ? decodeCursor(f.cursor) : null;
  const where = [
    Prisma.sql`o.state = ANY(${[...f.states]}::text[])`,
    f.sessionId ? Prisma.sql`fr.session_id = ${f.sessionId}::uuid` : null,
    f.classId !== null ? Prisma.sql`o.class_id = ${f.classId}` : null,
  ].filter((x): x is Prisma.Sql => x !== null);
  const page = after
    ? Prisma.sql`WHERE (q.score < ${after.score}::float8 OR (q.score = ${after.score}::float8 AND q.id > ${after.id}))`
    : Prisma.empty;
  const rows = await db.$queryRaw<QueueRow[]>`
    WITH ${QUEUE_CLASS_COUNTS},
         q AS (
           SELECT o.id::text, o.frame_id::text, fr.session_id::text, o.class_id, c.name AS class_name, c.l1, o.conf,
                  o.state, o.source, o.version, o.bbox, d.n AS class_count, t.n AS total,
                  (SELECT p.paths FROM provenance p WHERE p.object_id = o.id ORDER BY p.created_at DESC LIMIT 1) AS paths,
                  ${QUEUE_SCORE_SQL} AS score
           FROM objects o
           JOIN frames fr ON fr.id = o.frame_id
           JOIN ontology_classes c ON c.id = o.class_id
           JOIN dist d ON d.class_id = o.class_id
           CROSS JOIN total t
           WHERE ${Prisma.join(where, ' AND ')})
    SELECT * FROM q ${page}
    ORDER BY q.score DESC, q.id ASC
    LIMIT ${f.limit + 1}`;
  const items = rows.slice(0, f.limit).map((r) => ({
    object_id: r.id,
    frame_id: r.frame_id,
    session_id: r.session_id,
    class_id: r.class_id,
    class_name: r.class_name,
    l1: r.l1,
    conf: r.conf,
    state: r.state,
    source: r.source,
    version: r.version,
    bbox: r.bbox,
    score: r.score,
    uncertainty: uncertainty(r.conf),
    rarity: rarity(Number(r.class_count), Number(r.total)),
    /** The detection paths that proposed it (from its provenance); null for an object drawn by a person. */
    paths: Array.isArray(r.paths) ? (r.paths as string[]) : null,
  }));
  const last = items[items.length - 1];
  return {
    items,
    next_cursor:
      rows.length > f.limit && last ? encodeCursor({ score: last.score, id: last.object_id }) : null,
  };
}

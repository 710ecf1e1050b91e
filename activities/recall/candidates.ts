import type { Box } from '../../core/geometry';
import { temporalSupport } from '../../core/recall/missed';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { RECALL_KIND } from '.';

/**
 * A candidate's state, read from the object it became: `pending` while it is still the recall
 * run's object awaiting review, `accepted` or `rejected` once reviewed so, `changed` when a person
 * edited it into something else (docs/recall.md).
 */
export const RECALL_CANDIDATE_STATES = ['pending', 'accepted', 'rejected', 'changed'] as const;
export type RecallCandidateState = (typeof RECALL_CANDIDATE_STATES)[number];

const STATE_SQL = Prisma.sql`CASE WHEN o.source = 'recall' THEN 'pending' WHEN o.state = 'accepted' THEN 'accepted'
  WHEN o.state = 'rejected' THEN 'rejected' ELSE 'changed' END`;

/** Neighbouring frames each side whose objects back a candidate, and the overlap they need. */
const SUPPORT_WINDOW = 2;
const SUPPORT_IOU = 0.3;

interface CandidateRow {
  id: string;
  runId: string;
  frameId: string;
  sessionId: string;
  frameIndex: number;
  className: string;
  classId: number;
  bbox: number[];
  conf: number | null;
  source: string;
  objectState: string;
  version: number;
  state: RecallCandidateState;
  createdAt: Date;
}

/** The recall runs' candidates (the objects their ledgers name), by object id, with their temporal support. */
export async function listRecallCandidates(
  db: Db,
  query: {
    session_id?: string | undefined;
    run_id?: string | undefined;
    state?: RecallCandidateState | undefined;
    candidate_id?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const conds = [Prisma.sql`r.kind = ${RECALL_KIND}`];
  if (query.session_id) conds.push(Prisma.sql`f.session_id = ${query.session_id}::uuid`);
  if (query.run_id) conds.push(Prisma.sql`r.id = ${query.run_id}::uuid`);
  if (query.candidate_id) conds.push(Prisma.sql`o.id = ${query.candidate_id}::uuid`);
  if (query.state) conds.push(Prisma.sql`${STATE_SQL} = ${query.state}`);
  if (query.cursor) conds.push(Prisma.sql`o.id > ${query.cursor}::uuid`);
  const rows = await db.$queryRaw<CandidateRow[]>`
    SELECT o.id::text, r.id::text AS "runId", f.id::text AS "frameId", f.session_id::text AS "sessionId",
           f.index AS "frameIndex", c.name AS "className", c.id AS "classId", o.bbox, o.conf, o.source,
           o.state AS "objectState", o.version, ${STATE_SQL} AS state, o.created_at AS "createdAt"
      FROM agent_runs r
      JOIN agent_run_frames af ON af.run_id = r.id
      JOIN objects o ON o.id = ANY(af.created)
      JOIN frames f ON f.id = o.frame_id
      JOIN ontology_classes c ON c.id = o.class_id
     WHERE ${Prisma.join(conds, ' AND ')}
     ORDER BY o.id LIMIT ${query.limit + 1}`;
  const page = rows.slice(0, query.limit);
  const support = await supportOf(db, page);
  return {
    items: page.map((r) => ({
      candidate_id: r.id,
      object_id: r.id,
      run_id: r.runId,
      session_id: r.sessionId,
      frame_id: r.frameId,
      frame_index: r.frameIndex,
      class_id: r.classId,
      class_name: r.className,
      bbox: r.bbox,
      score: r.conf,
      state: r.state,
      object: { source: r.source, state: r.objectState, version: r.version },
      temporal_support: support.get(r.id) ?? 0,
      created_at: r.createdAt.toISOString(),
    })),
    limit: query.limit,
    next_cursor: rows.length > query.limit ? page.at(-1)!.id : null,
  };
}

/** Each candidate's temporal support, from one read of the objects on the frames around them. */
async function supportOf(db: Db, page: readonly CandidateRow[]): Promise<Map<string, number>> {
  if (page.length === 0) return new Map();
  const around = JSON.stringify(page.map((r) => ({ session_id: r.sessionId, index: r.frameIndex })));
  const neighbours = await db.$queryRaw<
    Array<{ sessionId: string; frameIndex: number; className: string; bbox: number[] }>
  >`
    SELECT DISTINCT ON (o.id) f.session_id::text AS "sessionId", f.index AS "frameIndex", c.name AS "className", o.bbox
      FROM jsonb_to_recordset(${around}::jsonb) AS a(session_id uuid, index int)
      JOIN frames f ON f.session_id = a.session_id AND f.index BETWEEN a.index - ${SUPPORT_WINDOW} AND a.index + ${SUPPORT_WINDOW}
      JOIN objects o ON o.frame_id = f.id AND o.state <> 'rejected'
      JOIN ontology_classes c ON c.id = o.class_id`;
  return new Map(
    page.map((r) => [
      r.id,
      temporalSupport(
        { box: r.bbox as Box, frameIndex: r.frameIndex, className: r.className },
        neighbours
          .filter((n) => n.sessionId === r.sessionId)
          .map((n) => ({ box: n.bbox as Box, frameIndex: n.frameIndex, className: n.className })),
        SUPPORT_WINDOW,
        SUPPORT_IOU,
      ),
    ]),
  );
}

/** Per recall run (of a session, or all), newest first: how far it got and what became of its candidates. */
export async function recallProgress(db: Db, sessionId: string | undefined) {
  const runs = await db.$queryRaw<
    Array<{
      id: string;
      status: string;
      sessionId: string;
      framesTotal: number;
      framesDone: number;
      counts: Record<string, number> | null;
      createdAt: Date;
      finishedAt: Date | null;
    }>
  >`
    SELECT r.id::text, r.status, r.params->'session_ids'->>0 AS "sessionId",
           (SELECT count(*)::int FROM frames f WHERE f.session_id = (r.params->'session_ids'->>0)::uuid) AS "framesTotal",
           (SELECT count(*)::int FROM agent_run_frames af WHERE af.run_id = r.id) AS "framesDone",
           (SELECT jsonb_object_agg(s.state, s.n) FROM (
              SELECT ${STATE_SQL} AS state, count(*)::int AS n
                FROM agent_run_frames af JOIN objects o ON o.id = ANY(af.created)
               WHERE af.run_id = r.id GROUP BY 1) s) AS counts,
           r.created_at AS "createdAt", r.finished_at AS "finishedAt"
      FROM agent_runs r
     WHERE r.kind = ${RECALL_KIND}
       AND (${sessionId ?? null}::text IS NULL OR r.params->'session_ids'->>0 = ${sessionId ?? null}::text)
     ORDER BY r.created_at DESC, r.id DESC LIMIT 100`;
  return {
    runs: runs.map((r) => {
      const counts = Object.fromEntries(RECALL_CANDIDATE_STATES.map((s) => [s, r.counts?.[s] ?? 0]));
      const decided = counts.accepted! + counts.rejected!;
      return {
        run_id: r.id,
        session_id: r.sessionId,
        status: r.status,
        frames_total: r.framesTotal,
        frames_done: r.framesDone,
        candidates: counts,
        // Accepted among the candidates a person decided: how much of the sensitive pass is real.
        yield: decided ? counts.accepted! / decided : null,
        created_at: r.createdAt.toISOString(),
        finished_at: r.finishedAt?.toISOString() ?? null,
      };
    }),
  };
}

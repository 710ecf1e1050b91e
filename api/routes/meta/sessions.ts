import { z } from 'zod';
import { NotFoundError } from '../../../core/errors';
import { decodeCursor, encodeCursor } from '../../../core/pagination';
import { readGate } from '../../../activities/inspector/gate-store';
import { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import {
  booleanParam,
  findSession,
  frameOut,
  gateOut,
  limitParam,
  sessionOut,
} from '../../http/session-reads';

/** Largest page of GET /api/sessions/page (docs/session-health.md). */
export const MAX_PAGE_LIMIT = 200;

const SessionFilters = {
  state: z.string().max(64).optional(),
  vehicle_id: z.string().max(200).optional(),
  project_id: z.string().max(200).optional(),
  quarantined: booleanParam.optional(),
};
type Filters = { state?: string; vehicle_id?: string; project_id?: string; quarantined?: boolean };

const SessionsQuery = z.strictObject({ ...SessionFilters, limit: limitParam(100, 500) });
const SessionsPageQuery = z.strictObject({
  ...SessionFilters,
  cursor: z.string().max(512).optional(),
  limit: limitParam(50, MAX_PAGE_LIMIT),
});

const filterWhere = (f: Filters): Prisma.SessionWhereInput => ({
  ...(f.state ? { state: f.state } : {}),
  ...(f.vehicle_id ? { vehicleId: f.vehicle_id } : {}),
  ...(f.project_id ? { projectId: f.project_id } : {}),
  ...(f.quarantined === undefined ? {} : { quarantined: f.quarantined }),
});

function filterSql(f: Filters): Prisma.Sql[] {
  const conds: Prisma.Sql[] = [];
  if (f.state) conds.push(Prisma.sql`state = ${f.state}`);
  if (f.vehicle_id) conds.push(Prisma.sql`vehicle_id = ${f.vehicle_id}`);
  if (f.project_id) conds.push(Prisma.sql`project_id = ${f.project_id}`);
  if (f.quarantined !== undefined) conds.push(Prisma.sql`quarantined = ${f.quarantined}`);
  return conds;
}

/** The `meta` group's session reads (the ontology routes of the group live in ontology.ts). */
export function createMetaSessionRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('meta')
    .get(
      '/api/sessions',
      {
        summary: 'Sessions, newest first, at most `limit` (page through all of them with /api/sessions/page)',
        access: 'annotator',
        query: SessionsQuery,
      },
      async ({ query }) => {
        const rows = await db.session.findMany({
          where: filterWhere(query),
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
          take: query.limit + 1,
        });
        return { items: rows.slice(0, query.limit).map(sessionOut), has_more: rows.length > query.limit };
      },
    )
    .get(
      '/api/sessions/page',
      {
        summary: `Sessions newest first by keyset pagination: pass next_cursor back as cursor; limit at most ${MAX_PAGE_LIMIT}. Rows that existed when paging began appear exactly once`,
        access: 'annotator',
        query: SessionsPageQuery,
      },
      async ({ query }) => {
        const conds = filterSql(query);
        if (query.cursor) {
          const after = decodeCursor(query.cursor);
          conds.push(Prisma.sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
        }
        // The key is read as text with microseconds: a Date would round it to milliseconds.
        const keys = await db.$queryRaw<Array<{ id: string; key_at: string }>>`
          SELECT id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
            FROM sessions
           ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}
           ORDER BY created_at DESC, id DESC
           LIMIT ${query.limit + 1}`;
        const page = keys.slice(0, query.limit);
        const rows = new Map(
          (await db.session.findMany({ where: { id: { in: page.map((k) => k.id) } } })).map((s) => [s.id, s]),
        );
        const last = page[page.length - 1];
        return {
          // A session deleted between the two reads is left out rather than answered half.
          items: page.flatMap((k) => (rows.has(k.id) ? [sessionOut(rows.get(k.id)!)] : [])),
          limit: query.limit,
          next_cursor:
            keys.length > query.limit && last ? encodeCursor({ createdAt: last.key_at, id: last.id }) : null,
        };
      },
    )
    .get(
      '/api/sessions/states',
      { summary: 'How many sessions are in each state, and how many are quarantined', access: 'annotator' },
      async () => {
        const [byState, quarantined, total] = await Promise.all([
          db.session.groupBy({ by: ['state'], _count: { _all: true }, orderBy: { state: 'asc' } }),
          db.session.count({ where: { quarantined: true } }),
          db.session.count(),
        ]);
        return { total, quarantined, states: byState.map((s) => ({ state: s.state, count: s._count._all })) };
      },
    )
    .get(
      '/api/sessions/{session_id}/first-frame',
      {
        summary: "The session's first frame (lowest index)",
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session, or it has no frames yet' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const frame = await db.frame.findFirst({
          where: { sessionId: session.id },
          orderBy: { index: 'asc' },
        });
        if (!frame)
          throw new NotFoundError(`session ${session.id} has no frames yet (state ${session.state})`);
        return frameOut(frame);
      },
    )
    .get(
      '/api/sessions/{session_id}/stats',
      {
        summary: 'Frame, ingest, privacy, annotation and health figures of one session',
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session' },
      },
      async ({ params }) => {
        const session = await findSession(db, params.session_id);
        const where = { sessionId: session.id };
        const [frames, redacted, pii, objects, gate] = await Promise.all([
          db.frame.aggregate({
            where,
            _count: { _all: true },
            _min: { timestampMs: true },
            _max: { timestampMs: true },
          }),
          db.frame.count({ where: { ...where, redactedUri: { not: null } } }),
          db.piiAudit.aggregate({
            where: { frame: where },
            _count: { _all: true },
            _sum: { nFaces: true, nPlates: true },
          }),
          db.annoObject.groupBy({
            by: ['state'],
            where: { frame: where },
            _count: { _all: true },
            orderBy: { state: 'asc' },
          }),
          readGate(db, session.id),
        ]);
        const first = frames._min.timestampMs;
        const last = frames._max.timestampMs;
        return {
          session_id: session.id,
          state: session.state,
          frames: {
            count: frames._count._all,
            first_timestamp_ms: first,
            last_timestamp_ms: last,
            duration_ms: first === null || last === null ? null : last - first,
            redacted: redacted,
          },
          ingest: {
            target_fps: session.targetFps,
            duplicate_count: session.duplicateCount,
            rejected_count: session.rejectedCount,
          },
          pii: {
            audited_frames: pii._count._all,
            faces: pii._sum.nFaces ?? 0,
            plates: pii._sum.nPlates ?? 0,
          },
          objects: {
            total: objects.reduce((s, o) => s + o._count._all, 0),
            by_state: Object.fromEntries(objects.map((o) => [o.state, o._count._all])),
          },
          health: gateOut(session.id, gate),
        };
      },
    );
}

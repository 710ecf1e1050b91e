import { NotFoundError } from '../../core/errors';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/**
 * Every human work queue at a glance (GET /api/platform/queue, docs/quality-measure.md): objects
 * waiting for a person (state review, annotate or submitted) by state, class and session; controls
 * awaiting a verdict; open label-error candidates; blind-audit items not yet labelled. Each queue
 * says how many wait and how long the oldest has waited: since the object last changed (it entered
 * its state then or earlier), since the control, candidate or blind audit was created. Ages are
 * read on the database clock.
 */

export const WAITING_STATES = ['review', 'annotate', 'submitted'] as const;
/** Sessions listed by their waiting objects, most first. */
export const QUEUE_TOP_SESSIONS = 100;

const n = (v: bigint | number | null | undefined): number => Number(v ?? 0);
const age = (v: number | null): number | null => (v === null ? null : Math.max(0, Math.round(v)));
const iso = (d: Date | null): string | null => d?.toISOString() ?? null;

export async function humanQueues(db: Db, opts: { session_id?: string | undefined }) {
  const sessionId = opts.session_id ?? null;
  if (sessionId) {
    const s = await db.session.findUnique({ where: { id: sessionId }, select: { id: true } });
    if (!s) throw new NotFoundError(`no session ${sessionId}`);
  }
  const states = [...WAITING_STATES];
  const inSession = (col: Prisma.Sql) =>
    sessionId ? Prisma.sql`AND ${col} = ${sessionId}::uuid` : Prisma.empty;
  const [objects, controls, candidates, blind] = await Promise.all([
    db.$queryRaw<
      Array<{ state: string; class_name: string; session_id: string; n: bigint; oldest: Date; age_s: number }>
    >`
      SELECT o.state, c.name AS class_name, f.session_id::text AS session_id, count(*) AS n,
             min(o.updated_at) AS oldest, extract(epoch FROM now() - min(o.updated_at))::float8 AS age_s
        FROM objects o JOIN frames f ON f.id = o.frame_id JOIN ontology_classes c ON c.id = o.class_id
       WHERE o.state = ANY(${states}::text[]) ${inSession(Prisma.sql`f.session_id`)}
       GROUP BY o.state, c.name, f.session_id`,
    db.$queryRaw<Array<{ class_name: string | null; n: bigint; oldest: Date; age_s: number }>>`
      SELECT class_name, count(*) AS n, min(created_at) AS oldest,
             extract(epoch FROM now() - min(created_at))::float8 AS age_s
        FROM control_samples WHERE verdict IS NULL ${inSession(Prisma.sql`session_id`)}
       GROUP BY class_name`,
    db.$queryRaw<Array<{ kind: string; n: bigint; oldest: Date; age_s: number }>>`
      SELECT e.kind, count(*) AS n, min(e.created_at) AS oldest,
             extract(epoch FROM now() - min(e.created_at))::float8 AS age_s
        FROM error_candidates e
       WHERE e.state = 'open'
         ${sessionId ? Prisma.sql`AND e.frame_id IN (SELECT id FROM frames WHERE session_id = ${sessionId}::uuid)` : Prisma.empty}
       GROUP BY e.kind`,
    db.$queryRaw<Array<{ audit_id: string; name: string; n: bigint; oldest: Date; age_s: number }>>`
      SELECT a.id::text AS audit_id, a.name, count(*) AS n, min(a.created_at) AS oldest,
             extract(epoch FROM now() - min(a.created_at))::float8 AS age_s
        FROM blind_audit_items i JOIN blind_audits a ON a.id = i.audit_id
       WHERE i.verdict IS NULL
         ${sessionId ? Prisma.sql`AND i.frame_id IN (SELECT id FROM frames WHERE session_id = ${sessionId}::uuid)` : Prisma.empty}
       GROUP BY a.id, a.name`,
  ]);

  /** Sum and oldest over rows, and the rows grouped by a key. */
  const roll = <R extends { n: bigint; oldest: Date; age_s: number }>(rows: readonly R[]) => {
    let count = 0;
    let oldest: Date | null = null;
    let ageS: number | null = null;
    for (const r of rows) {
      count += n(r.n);
      if (oldest === null || r.oldest < oldest) {
        oldest = r.oldest;
        ageS = r.age_s;
      }
    }
    return { count, oldest_at: iso(oldest), oldest_age_s: age(ageS) };
  };
  const group = <R extends { n: bigint; oldest: Date; age_s: number }>(
    rows: readonly R[],
    keyOf: (r: R) => string,
  ) => {
    const by = new Map<string, R[]>();
    for (const r of rows) by.set(keyOf(r), [...(by.get(keyOf(r)) ?? []), r]);
    return [...by.entries()].map(([key, list]) => ({ key, ...roll(list), rows: list }));
  };

  const byState = Object.fromEntries(
    states.map((s) => [s, roll(objects.filter((o) => o.state === s))]),
  ) as Record<(typeof WAITING_STATES)[number], ReturnType<typeof roll>>;
  const stateCounts = (rows: readonly (typeof objects)[number][]) =>
    Object.fromEntries(
      states.map((s) => [s, rows.filter((r) => r.state === s).reduce((a, r) => a + n(r.n), 0)]),
    );
  const byClass = group(objects, (o) => o.class_name)
    .map(({ key, rows, ...r }) => ({ class_name: key, ...r, by_state: stateCounts(rows) }))
    .sort((a, b) => b.count - a.count || a.class_name.localeCompare(b.class_name));
  const sessions = group(objects, (o) => o.session_id).sort(
    (a, b) => b.count - a.count || a.key.localeCompare(b.key),
  );
  const names = new Map(
    (
      await db.session.findMany({
        where: { id: { in: sessions.slice(0, QUEUE_TOP_SESSIONS).map((s) => s.key) } },
        select: { id: true, name: true },
      })
    ).map((s) => [s.id, s.name]),
  );
  const blindRoll = roll(blind);
  return {
    session_id: sessionId,
    objects: {
      ...roll(objects),
      states,
      by_state: byState,
      by_class: byClass,
      by_session: sessions.slice(0, QUEUE_TOP_SESSIONS).map(({ key, rows, ...r }) => ({
        session_id: key,
        name: names.get(key) ?? null,
        ...r,
        by_state: stateCounts(rows),
      })),
      sessions_waiting: sessions.length,
    },
    controls: {
      ...roll(controls),
      by_class: controls
        .map((c) => ({
          class_name: c.class_name,
          count: n(c.n),
          oldest_at: iso(c.oldest),
          oldest_age_s: age(c.age_s),
        }))
        .sort((a, b) => b.count - a.count || String(a.class_name).localeCompare(String(b.class_name))),
    },
    error_candidates: {
      ...roll(candidates),
      by_kind: Object.fromEntries(candidates.map((c) => [c.kind, n(c.n)])),
    },
    blind_audit_items: {
      ...blindRoll,
      by_audit: blind
        .map((b) => ({
          audit_id: b.audit_id,
          name: b.name,
          count: n(b.n),
          oldest_at: iso(b.oldest),
          oldest_age_s: age(b.age_s),
        }))
        .sort((a, b) => b.count - a.count || a.audit_id.localeCompare(b.audit_id)),
    },
    totals: {
      waiting: roll(objects).count + roll(controls).count + roll(candidates).count + blindRoll.count,
    },
  };
}

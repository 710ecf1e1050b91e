import { Context } from '@temporalio/activity';
import { NotFoundError } from '../../core/errors';
import { isMachineSource } from '../../core/objects/sources';
import { criticVetoesOf, objectQualityScore } from '../../core/quality/object-quality';
import { Prisma, type Calibration } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import type { Db } from '../db';
import { activeCalibration, calibratedConfOf } from './calibration';
import { recordOperation } from './operations';

/**
 * Object quality (GET /api/objects/{object_id}/quality, POST /api/objects/quality/backfill,
 * docs/quality-measure.md): the evidence on record about an object — provenance, critic vetoes, its
 * review history, its control verdict, open error candidates naming it, the sealed gold sets
 * holding it, its calibrated confidence under the active calibration — scored by
 * core/quality/object-quality and kept in `object_quality` (one row per object, refreshed on every
 * computation). Computed a page of objects at a time: a handful of set-based reads per page.
 */

/** Objects computed per page (one round of reads, one upsert). */
export const QUALITY_PAGE = 500;
/** A backfill of at most this many objects runs inside the request; a larger one is a workflow. */
export const BACKFILL_SYNC_MAX = 2000;

interface Gathered {
  objectId: string;
  score: number;
  calibratedConf: number | null;
  calibrationId: string | null;
  evidence: Record<string, unknown>;
}

/** Evidence and score of each of `ids` (objects that do not exist are left out). */
export async function gatherObjectQuality(
  db: Db | Prisma.TransactionClient,
  ids: readonly string[],
  calibration: Calibration | null,
): Promise<Gathered[]> {
  if (!ids.length) return [];
  const list = [...ids];
  const [objects, provenance, reviews, controls, candidates, gold] = await Promise.all([
    db.annoObject.findMany({
      where: { id: { in: list } },
      select: { id: true, source: true, state: true, conf: true, classId: true },
    }),
    db.$queryRaw<
      Array<{
        objectId: string;
        paths: unknown;
        agreement: number | null;
        entropy: number | null;
        qualityFlags: unknown;
        trace: unknown;
      }>
    >`
      SELECT DISTINCT ON (object_id) object_id::text AS "objectId", paths, agreement, entropy,
             quality_flags AS "qualityFlags", reasoner_trace AS trace
        FROM provenance WHERE object_id = ANY(${list}::uuid[])
       ORDER BY object_id, created_at DESC, id DESC`,
    db.$queryRaw<Array<{ objectId: string; reviews: Array<Record<string, unknown>> }>>`
      SELECT object_id::text AS "objectId",
             json_agg(json_build_object('action', action, 'reviewer', reviewer, 'reviewer_id', reviewer_id,
                      'at', created_at, 'source_before', before->>'source', 'class_before', before->'class_id',
                      'class_after', after->'class_id') ORDER BY created_at, id) AS reviews
        FROM reviews WHERE object_id = ANY(${list}::uuid[]) GROUP BY object_id`,
    db.controlSample.findMany({
      where: { objectId: { in: list } },
      select: { id: true, objectId: true, verdict: true, verdictAt: true, createdAt: true },
    }),
    db.$queryRaw<Array<{ id: string; objectId: string; kind: string; score: number; createdAt: Date }>>`
      SELECT e.id::text, x.object_id::text AS "objectId", e.kind, e.score, e.created_at AS "createdAt"
        FROM error_candidates e, unnest(e.object_ids) AS x(object_id)
       WHERE e.state = 'open' AND x.object_id = ANY(${list}::uuid[])`,
    db.$queryRaw<Array<{ objectId: string; goldId: string; name: string }>>`
      SELECT gi.object_id::text AS "objectId", g.id::text AS "goldId", g.name
        FROM gold_items gi JOIN gold_sets g ON g.id = gi.gold_id
       WHERE g.sealed_at IS NOT NULL AND gi.object_id = ANY(${list}::uuid[])`,
  ]);
  const group = <T extends { objectId: string }>(rows: readonly T[]) => {
    const m = new Map<string, T[]>();
    for (const r of rows) m.set(r.objectId, [...(m.get(r.objectId) ?? []), r]);
    return m;
  };
  const provBy = new Map(provenance.map((p) => [p.objectId, p]));
  const reviewsBy = new Map(reviews.map((r) => [r.objectId, r.reviews]));
  const controlBy = new Map(controls.map((c) => [c.objectId, c]));
  const candBy = group(candidates);
  const goldBy = group(gold);
  return objects.map((o): Gathered => {
    const p = provBy.get(o.id);
    const history = reviewsBy.get(o.id) ?? [];
    const control = controlBy.get(o.id);
    const open = candBy.get(o.id) ?? [];
    const golds = goldBy.get(o.id) ?? [];
    const machine = isMachineSource(o.source);
    const calibrated = calibration && machine ? calibratedConfOf(calibration, o.classId, o.conf) : null;
    const vetoes = criticVetoesOf(p?.qualityFlags);
    const scored = objectQualityScore({
      source: o.source,
      state: o.state,
      machine,
      conf: o.conf,
      calibratedConf: calibrated,
      agreement: p?.agreement ?? null,
      entropy: p?.entropy ?? null,
      criticVetoes: vetoes,
      controlVerdict: control?.verdict ?? null,
      goldSets: golds.length,
      openErrorScores: open.map((c) => c.score),
    });
    const byAction: Record<string, number> = {};
    for (const r of history) byAction[String(r.action)] = (byAction[String(r.action)] ?? 0) + 1;
    const first = history[0];
    const last = history[history.length - 1];
    const evidence = {
      source: o.source,
      state: o.state,
      machine,
      conf: o.conf,
      calibrated_conf: calibrated,
      calibration_id: calibrated === null ? null : calibration!.id,
      provenance: p
        ? {
            paths: p.paths,
            agreement: p.agreement,
            entropy: p.entropy,
            quality_flags: p.qualityFlags,
          }
        : null,
      critic_vetoes: vetoes,
      reviews: {
        count: history.length,
        by_action: byAction,
        first: first ? { action: first.action, at: first.at, source_before: first.source_before } : null,
        last: last ? { action: last.action, reviewer: last.reviewer, at: last.at } : null,
        class_changed: history.some(
          (r) => r.class_before !== null && r.class_after !== null && r.class_before !== r.class_after,
        ),
      },
      control: control
        ? {
            sample_id: control.id,
            verdict: control.verdict,
            verdict_at: control.verdictAt?.toISOString() ?? null,
          }
        : null,
      open_error_candidates: open.map((c) => ({ id: c.id, kind: c.kind, score: c.score })),
      gold_sets: golds.map((g) => ({ gold_id: g.goldId, name: g.name })),
      basis: scored.basis,
      base: scored.base,
      factors: scored.factors,
    };
    return {
      objectId: o.id,
      score: scored.score,
      calibratedConf: calibrated,
      calibrationId: calibrated === null ? null : calibration!.id,
      evidence,
    };
  });
}

/** Writes (or refreshes) the object_quality rows of a computed page in one statement. */
async function storeQuality(db: Db | Prisma.TransactionClient, rows: readonly Gathered[]): Promise<Date> {
  if (!rows.length) return new Date();
  const doc = JSON.stringify(
    rows.map((r) => ({
      object_id: r.objectId,
      score: r.score,
      calibrated_conf: r.calibratedConf,
      calibration_id: r.calibrationId,
      evidence: r.evidence,
    })),
  );
  const [row] = await db.$queryRaw<Array<{ at: Date }>>`
    WITH x AS (
      INSERT INTO object_quality (object_id, score, calibrated_conf, calibration_id, evidence, computed_at)
      SELECT x.object_id, x.score, x.calibrated_conf, x.calibration_id, x.evidence, now()
        FROM jsonb_to_recordset(${doc}::jsonb)
          AS x(object_id uuid, score float8, calibrated_conf float8, calibration_id uuid, evidence jsonb)
       -- An object deleted meanwhile has no row to describe.
       WHERE EXISTS (SELECT 1 FROM objects o WHERE o.id = x.object_id)
      ON CONFLICT (object_id) DO UPDATE SET score = EXCLUDED.score, calibrated_conf = EXCLUDED.calibrated_conf,
        calibration_id = EXCLUDED.calibration_id, evidence = EXCLUDED.evidence, computed_at = EXCLUDED.computed_at
      RETURNING computed_at
    ) SELECT coalesce(max(computed_at), now()) AS at FROM x`;
  return row!.at;
}

/** GET /api/objects/{object_id}/quality: computes, stores and answers one object's quality. */
export async function objectQuality(db: Db, objectId: string) {
  const calibration = await activeCalibration(db);
  const [row] = await gatherObjectQuality(db, [objectId], calibration);
  if (!row) throw new NotFoundError(`no object ${objectId}`);
  const at = await storeQuality(db, [row]);
  return {
    object_id: row.objectId,
    score: row.score,
    calibrated_conf: row.calibratedConf,
    calibration_id: row.calibrationId,
    computed_at: at.toISOString(),
    ...row.evidence,
  };
}

export type BackfillScope = 'missing' | 'all';

export interface BackfillInput {
  scope: BackfillScope;
  sessionId: string | null;
  actorId: string | null;
  requestId: string | null;
}

export interface BackfillHeartbeat {
  after: string | null;
  computed: number;
}

const backfillWhere = (input: Pick<BackfillInput, 'scope' | 'sessionId'>): Prisma.AnnoObjectWhereInput => ({
  ...(input.scope === 'missing' ? { quality: { is: null } } : {}),
  ...(input.sessionId ? { frame: { sessionId: input.sessionId } } : {}),
});

export const backfillWorkflowId = (input: Pick<BackfillInput, 'scope' | 'sessionId'>) =>
  `object-quality-backfill-${input.sessionId ?? 'corpus'}-${input.scope}`;

/** How many objects a backfill would compute. */
export async function backfillSize(db: Db, input: Pick<BackfillInput, 'scope' | 'sessionId'>) {
  if (input.sessionId) {
    const s = await db.session.findUnique({ where: { id: input.sessionId }, select: { id: true } });
    if (!s) throw new NotFoundError(`no session ${input.sessionId}`);
  }
  return db.annoObject.count({ where: backfillWhere(input) });
}

/**
 * Computes the scope's objects a page at a time in id order (keyset `after`), each page stored
 * in one statement; `onPage` sees the cursor after every page (the workflow's heartbeat).
 */
export async function backfillObjectQualityPages(
  db: Db,
  input: Pick<BackfillInput, 'scope' | 'sessionId'>,
  from: BackfillHeartbeat,
  onPage: (state: BackfillHeartbeat) => void = () => undefined,
): Promise<BackfillHeartbeat> {
  const calibration = await activeCalibration(db);
  const state = { ...from };
  for (;;) {
    const page = await db.annoObject.findMany({
      where: { ...backfillWhere(input), ...(state.after ? { id: { gt: state.after } } : {}) },
      orderBy: { id: 'asc' },
      take: QUALITY_PAGE,
      select: { id: true },
    });
    if (!page.length) break;
    const rows = await gatherObjectQuality(
      db,
      page.map((p) => p.id),
      calibration,
    );
    await storeQuality(db, rows);
    state.after = page[page.length - 1]!.id;
    state.computed += rows.length;
    onPage({ ...state });
    if (page.length < QUALITY_PAGE) break;
  }
  return state;
}

/** Records a finished backfill as eval operation `object_quality_backfill`, audited. */
export async function recordBackfill(
  db: Db,
  input: BackfillInput,
  computed: number,
  workflowId: string | null,
) {
  const op = await recordOperation(db, {
    opType: 'object_quality_backfill',
    subjectIds: input.sessionId ? [input.sessionId] : [],
    params: { scope: input.scope, session_id: input.sessionId, workflow_id: workflowId },
    result: { computed },
    actor: input.actorId
      ? { userId: input.actorId, role: 'reviewer', requestId: input.requestId ?? '' }
      : null,
  });
  await recordAudit(db, {
    actorId: input.actorId,
    action: 'quality.object_quality.backfilled',
    subjectType: 'eval_operation',
    subjectId: op.id,
    detail: { scope: input.scope, session_id: input.sessionId, computed, workflow_id: workflowId },
    requestId: input.requestId,
  });
  return op;
}

/** The backfill's activity (cpu queue), run by objectQualityBackfillWorkflow. */
export function createObjectQualityActivities({ db }: Pick<ActivityDeps, 'db'>) {
  return {
    /**
     * Backfills object quality in one heartbeating activity: the heartbeat carries the keyset
     * cursor, so a retried attempt resumes after the last page it reported. Records the outcome.
     */
    async backfillObjectQuality(input: BackfillInput): Promise<{ computed: number }> {
      const ctx = Context.current();
      const beat = ctx.info.heartbeatDetails as BackfillHeartbeat | undefined;
      const start = beat ?? { after: null, computed: 0 };
      ctx.heartbeat(start);
      const done = await backfillObjectQualityPages(db, input, start, (s) => ctx.heartbeat(s));
      await recordBackfill(db, input, done.computed, ctx.info.workflowExecution?.workflowId ?? null);
      return { computed: done.computed };
    },
  };
}

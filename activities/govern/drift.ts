import { LIGHTING_SQL } from '../../core/curation/slice';
import { NotFoundError, RefusedError } from '../../core/errors';
import { compareDrift, type DriftComparison, type DriftSample } from '../../core/govern/drift';
import { onceEventId } from '../../core/events/notify';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import { findCommit } from '../datasets/read';
import type { Db } from '../db';
import { emitEvent } from '../events/emit';

/**
 * The drift scan (docs/drift.md): recent sessions against the sessions of the dataset commit the
 * champion was trained on, feature by feature (core/govern/drift.ts), recorded as a governance run
 * with one finding per feature, and announced (`drift.detected`) when a feature drifted. It reads
 * aggregates and bounded samples, so it answers within the request.
 */

/** Observations per numeric feature and side; beyond it a deterministic sample (by id hash) is tested. */
export const DRIFT_MAX_SAMPLES = 20_000;

export interface DriftScanRequest {
  baselineCommitId?: string;
  sessionIds?: string[];
  windowDays: number;
  alpha: number;
  minSamples: number;
  requestedBy: string | null;
}

/** The baseline's commit and the model trained on it, or a refusal saying what to give instead. */
async function baselineCommit(db: Db, commitId: string | undefined) {
  if (commitId) {
    const commit = await findCommit(db, commitId);
    const model = await db.model.findFirst({
      where: { datasetCommitId: commitId, state: 'champion' },
      select: { modelVersion: true },
    });
    return { commit, modelVersion: model?.modelVersion ?? null, from: 'request' as const };
  }
  const champion = await db.model.findFirst({
    where: { task: 'detection', state: 'champion' },
    select: { modelVersion: true, datasetCommitId: true },
  });
  if (!champion)
    throw new RefusedError('there is no detection champion to compare with; give baseline_commit_id');
  if (!champion.datasetCommitId)
    throw new RefusedError(
      `the champion ${champion.modelVersion} names no dataset commit it was trained on (it was trained elsewhere); give baseline_commit_id`,
    );
  return {
    commit: await findCommit(db, champion.datasetCommitId),
    modelVersion: champion.modelVersion,
    from: 'champion' as const,
  };
}

/** The sessions to compare: those given, or those ready within the window, never the baseline's own. */
async function recentSessions(
  db: Db,
  req: DriftScanRequest,
  baseline: ReadonlySet<string>,
  now: Date,
): Promise<string[]> {
  if (req.sessionIds) {
    const ids = [...new Set(req.sessionIds)];
    const found = await db.session.findMany({ where: { id: { in: ids } }, select: { id: true } });
    const missing = ids.filter((id) => !found.some((s) => s.id === id));
    if (missing.length) throw new NotFoundError(`no session ${missing.join(', ')}`);
    const overlap = ids.filter((id) => baseline.has(id));
    if (overlap.length)
      throw new RefusedError(
        `sessions ${overlap.join(', ')} are in the baseline commit; drift is measured on sessions it does not hold`,
      );
    return ids.sort();
  }
  const since = new Date(now.getTime() - req.windowDays * 86_400_000);
  const rows = await db.session.findMany({
    where: { state: 'ready', createdAt: { gte: since }, id: { notIn: [...baseline] } },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  if (!rows.length)
    throw new RefusedError(
      `no session outside the baseline commit became ready in the last ${req.windowDays} days; give session_ids or a longer window_days`,
    );
  return rows.map((r) => r.id);
}

const counts = (rows: Array<{ v: string | null; n: number }>) =>
  Object.fromEntries(rows.filter((r) => r.v !== null).map((r) => [r.v!, r.n]));

/** One side's observations: class counts, context counts, confidences and image statistics. */
async function sampleSide(db: Db, sessionIds: readonly string[]): Promise<DriftSample> {
  const ids = [...sessionIds];
  const [classes, lighting, weather, confidence, image] = await Promise.all([
    db.$queryRawUnsafe<Array<{ v: string; n: number }>>(
      `SELECT c.name AS v, count(*)::int AS n FROM objects o
         JOIN frames f ON f.id = o.frame_id JOIN ontology_classes c ON c.id = o.class_id
        WHERE f.session_id = ANY($1::uuid[]) AND o.state <> 'rejected' GROUP BY c.name`,
      ids,
    ),
    db.$queryRawUnsafe<Array<{ v: string; n: number }>>(
      `SELECT v, count(*)::int AS n FROM (SELECT (${LIGHTING_SQL}) AS v FROM frames f
        WHERE f.session_id = ANY($1::uuid[])) l WHERE v <> 'unknown' GROUP BY v`,
      ids,
    ),
    db.$queryRawUnsafe<Array<{ v: string; n: number }>>(
      `SELECT f.context->>'weather' AS v, count(*)::int AS n FROM frames f
        WHERE f.session_id = ANY($1::uuid[]) AND f.context->>'weather' IS NOT NULL GROUP BY 1`,
      ids,
    ),
    db.$queryRawUnsafe<Array<{ v: number }>>(
      `SELECT o.conf AS v FROM objects o JOIN frames f ON f.id = o.frame_id
        WHERE f.session_id = ANY($1::uuid[]) AND o.state <> 'rejected' AND o.conf IS NOT NULL
        ORDER BY md5(o.id::text) LIMIT $2`,
      ids,
      DRIFT_MAX_SAMPLES,
    ),
    db.$queryRawUnsafe<Array<{ brightness: number | null; sharpness: number | null }>>(
      `SELECT (f.context->'exposure'->>'mean_luma')::float8 AS brightness, (f.context->>'sharpness')::float8 AS sharpness
         FROM frames f WHERE f.session_id = ANY($1::uuid[]) ORDER BY md5(f.id::text) LIMIT $2`,
      ids,
      DRIFT_MAX_SAMPLES,
    ),
  ]);
  const numbers = (v: Array<number | null>) => v.filter((x): x is number => x !== null && Number.isFinite(x));
  return {
    classes: counts(classes),
    context: { lighting: counts(lighting), weather: counts(weather) },
    confidence: numbers(confidence.map((r) => r.v)),
    image: {
      brightness: numbers(image.map((r) => r.brightness)),
      sharpness: numbers(image.map((r) => r.sharpness)),
    },
  };
}

const frameCount = (db: Db, sessionIds: readonly string[]) =>
  db.frame.count({ where: { sessionId: { in: [...sessionIds] } } });

export interface DriftScanReport extends DriftComparison {
  run_id: string;
  baseline: {
    commit_id: string;
    model_version: string | null;
    from: 'champion' | 'request';
    sessions: number;
    frames: number;
  };
  recent: { session_ids: string[]; frames: number; window_days: number | null };
  alpha: number;
  min_samples: number;
  drifted: boolean;
  drifted_features: string[];
  created_at: string;
}

export async function scanDrift(db: Db, req: DriftScanRequest, now = new Date()): Promise<DriftScanReport> {
  const { commit, modelVersion, from } = await baselineCommit(db, req.baselineCommitId);
  const erased = new Set(commit.erasedSessionIds);
  const baselineIds = commit.sessionIds.filter((id) => !erased.has(id));
  if (!baselineIds.length)
    throw new RefusedError(`dataset commit ${commit.commitId} holds no session any more (all erased)`);
  const recentIds = await recentSessions(db, req, new Set(commit.sessionIds), now);
  const [reference, recent, baselineFrames, recentFrames] = await Promise.all([
    sampleSide(db, baselineIds),
    sampleSide(db, recentIds),
    frameCount(db, baselineIds),
    frameCount(db, recentIds),
  ]);
  const comparison = compareDrift(reference, recent, { alpha: req.alpha, minSamples: req.minSamples });
  const driftedFeatures = comparison.findings.filter((f) => f.drifted).map((f) => f.feature);
  const baseline = {
    commit_id: commit.commitId,
    model_version: modelVersion,
    from,
    sessions: baselineIds.length,
    frames: baselineFrames,
  };
  const recentSide = {
    session_ids: recentIds,
    frames: recentFrames,
    window_days: req.sessionIds ? null : req.windowDays,
  };
  const params = {
    baseline_commit_id: req.baselineCommitId ?? null,
    session_ids: req.sessionIds ?? null,
    window_days: req.windowDays,
    alpha: req.alpha,
    min_samples: req.minSamples,
  };
  const result = {
    baseline,
    recent: recentSide,
    threshold: comparison.threshold,
    drifted: driftedFeatures.length > 0,
    drifted_features: driftedFeatures,
    not_measurable: comparison.not_measurable,
  };
  // The run, its findings, the audit entry and the announcement commit together.
  const run = await db.$transaction(async (tx) => {
    const run = await tx.governanceRun.create({
      data: {
        kind: 'drift-scan',
        status: 'completed',
        params,
        result: result as unknown as Prisma.InputJsonValue,
        requestedBy: req.requestedBy,
        createdAt: now,
        finishedAt: now,
      },
    });
    await tx.driftFinding.createMany({
      data: comparison.findings.map((f) => ({
        runId: run.id,
        feature: f.feature,
        test: f.test,
        statistic: f.statistic,
        pValue: f.p_value,
        threshold: f.threshold,
        drifted: f.drifted,
        detail: f.detail as Prisma.InputJsonValue,
      })),
    });
    await recordAudit(tx, {
      actorId: req.requestedBy,
      action: 'govern.drift_scanned',
      subjectType: 'governance_run',
      subjectId: run.id,
      detail: {
        baseline_commit_id: commit.commitId,
        sessions: recentIds.length,
        drifted_features: driftedFeatures,
      },
    });
    if (driftedFeatures.length)
      await emitEvent(tx, {
        id: onceEventId('drift.detected', run.id),
        kind: 'drift.detected',
        subjectType: 'governance_run',
        subjectId: run.id,
        actorId: req.requestedBy,
        payload: {
          run_id: run.id,
          baseline_commit_id: commit.commitId,
          features: driftedFeatures.join(', '),
          sessions: recentIds.length,
        },
      });
    return run;
  });
  return {
    run_id: run.id,
    baseline,
    recent: recentSide,
    alpha: req.alpha,
    min_samples: req.minSamples,
    ...comparison,
    drifted: driftedFeatures.length > 0,
    drifted_features: driftedFeatures,
    created_at: run.createdAt.toISOString(),
  };
}

import { NotFoundError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { EVALUATE_OP } from '../evalgov/evaluate';
import { usableRun } from '../evalgov/scope';
import { currentChampion } from '../models/artifacts';
import { recordOperation } from '../quality/operations';
import { classNames, evaluateRunOnGold, recordGoldEvaluation, safetyClasses } from './evaluation';
import { runOnGold, type GoldRun } from './runs';

/**
 * The champion sweep (POST /api/activelearn/champion-sweep, docs/promotion.md): the current
 * champion evaluated on the sealed gold sets it has not been evaluated on — every set sealed since
 * its last evaluation, and any older one it has never met — each evaluation recorded like the
 * gate's, and the sweep as a `champion_sweep` operation naming the safety floors new gold breaks.
 * A sweep never demotes: a champion that falls under a floor on new gold is flagged for people to
 * act on (train a challenger, or revert the promotion).
 */

export const SWEEP_OP = 'champion_sweep';
/** Most gold sets one sweep evaluates (the oldest first); the next sweep takes the rest. */
export const SWEEP_MAX_GOLD_SETS = 20;

export interface SweepRequest {
  task: string;
  /** Only these gold sets (still only those the champion has not been evaluated on). */
  goldIds: string[] | null;
  actor: Actor;
}

export interface SweepPlan {
  championVersion: string;
  /** The champion's latest evaluation before this sweep, if any. */
  lastEvaluatedAt: string | null;
  golds: Array<{ goldId: string; sealedAt: string; run: GoldRun }>;
}

/** Sealed gold sets the model has no whole-set evaluation on, oldest seal first. */
export async function dueGoldSets(db: Db, modelVersion: string, goldIds: string[] | null) {
  const evaluated = await db.$queryRaw<Array<{ gold_id: string; last: Date }>>`
    SELECT params->>'gold_id' AS gold_id, max(created_at) AS last FROM eval_operations
     WHERE op_type = ${EVALUATE_OP} AND params->>'model_version' = ${modelVersion}
       AND params->>'slice_id' IS NULL
     GROUP BY 1`;
  const done = new Set(evaluated.map((e) => e.gold_id));
  const last = evaluated.reduce<Date | null>((m, e) => (m && m > e.last ? m : e.last), null);
  if (goldIds) {
    const found = await db.goldSet.findMany({ where: { id: { in: goldIds } }, select: { id: true } });
    const missing = goldIds.filter((id) => !found.some((g) => g.id === id));
    if (missing.length) throw new NotFoundError(`no gold set ${missing.join(', ')}`);
  }
  const ids: Prisma.StringFilter = {};
  if (goldIds) ids.in = goldIds;
  if (done.size) ids.notIn = [...done];
  const golds = await db.goldSet.findMany({
    where: { sealedAt: { not: null }, contentHash: { not: null }, id: ids },
    orderBy: [{ sealedAt: 'asc' }, { id: 'asc' }],
    take: SWEEP_MAX_GOLD_SETS,
    select: { id: true, sealedAt: true },
  });
  return { lastEvaluatedAt: last?.toISOString() ?? null, golds };
}

export async function planChampionSweep(deps: ActivityDeps, req: SweepRequest): Promise<SweepPlan> {
  const champion = await currentChampion(deps, req.task);
  const due = await dueGoldSets(deps.db, champion.modelVersion, req.goldIds);
  const golds = [];
  for (const g of due.golds)
    golds.push({
      goldId: g.id,
      sealedAt: g.sealedAt!.toISOString(),
      run: await runOnGold(
        deps.db,
        { modelVersion: champion.modelVersion, goldId: g.id, field: 'gold_id' },
        req.actor,
      ),
    });
  return { championVersion: champion.modelVersion, lastEvaluatedAt: due.lastEvaluatedAt, golds };
}

/** Evaluates the champion on each gold set whose run completed and records the sweep. */
export async function finishChampionSweep(
  deps: ActivityDeps,
  input: {
    request: SweepRequest;
    plan: SweepPlan;
    failed: Array<{ goldId: string; error: string }>;
    workflowRunId: string;
  },
) {
  const { db, config } = deps;
  const earlier = await db.evalOperation.findFirst({
    where: { opType: SWEEP_OP, params: { path: ['workflow_run_id'], equals: input.workflowRunId } },
  });
  if (earlier) return { operation_id: earlier.id, result: earlier.result };
  const shared = { names: await classNames(db), safety: await safetyClasses(db, config) };
  const failed = new Set(input.failed.map((f) => f.goldId));
  const evaluated = [];
  for (const g of input.plan.golds.filter((x) => !failed.has(x.goldId))) {
    const run = await usableRun(db, g.run.runId);
    const { gold, evaluation, safety: floors } = await evaluateRunOnGold(db, config, run, g.goldId, shared);
    const op = await recordGoldEvaluation(db, evaluation, input.request.actor);
    evaluated.push({
      gold_id: gold.id,
      sealed_at: g.sealedAt,
      run_id: run.id,
      run_reused: g.run.reused,
      operation_id: op.id,
      frames: evaluation.result.frames,
      map: evaluation.result.map,
      ap50: evaluation.result.ap50,
      recall: evaluation.result.recall,
      parity_within: evaluation.result.parity.within,
      safety: { passed: floors.passed, failing: floors.failing, unmeasured: floors.unmeasured },
    });
  }
  const result = {
    champion_version: input.plan.championVersion,
    last_evaluated_at: input.plan.lastEvaluatedAt,
    evaluated,
    failed: input.failed,
    alerts: evaluated.flatMap((e) =>
      e.safety.failing.map(
        (c) =>
          `${input.plan.championVersion} on gold set ${e.gold_id}: safety class ${c.class_name} under its floor (${c.under.join(', ')})`,
      ),
    ),
  };
  const op = await recordOperation(db, {
    opType: SWEEP_OP,
    subjectIds: [input.plan.championVersion, ...evaluated.map((e) => e.gold_id)],
    params: {
      task: input.request.task,
      champion_version: input.plan.championVersion,
      gold_ids: input.plan.golds.map((g) => g.goldId),
      workflow_run_id: input.workflowRunId,
    },
    result,
    actor: input.request.actor,
  });
  return { operation_id: op.id, result };
}

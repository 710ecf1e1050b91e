import { ConflictError, NotFoundError } from '../../core/errors';
import {
  inScope,
  type EvalFrame,
  type EvalGoldBox,
  type EvalPrediction,
  type Scope,
} from '../../core/evalgov';
import {
  compareScope,
  contextSlices,
  judgeChallenger,
  mapDifferenceTest,
  matchAtThresholds,
  refusal,
  type GateDecision,
  type GateRule,
  type HarnessCheck,
} from '../../core/registry';
import type { InferenceRun, Model, Prisma, Promotion } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { loadGold, loadPredictions, parityEpsilon, sliceScopes, usableRun } from '../evalgov/scope';
import { recordGateDirectedRun } from '../flywheel/gate-directed';
import { currentChampion, findModel } from '../models/artifacts';
import {
  classNames,
  evaluateOnGold,
  frameContexts,
  judgeSafety,
  recordGoldEvaluation,
  safetyClasses,
  GATE_IOU,
} from './evaluation';
import { registryModelOut } from './models';
import { runOnGold, type GoldRun } from './runs';

/**
 * The champion/challenger gate (docs/promotion.md). The workflow plans the two runs (reused or
 * queued), runs the queued ones as child inference runs on the GPU slot, then one cpu activity
 * evaluates both per slice, judges core/registry's rules and records the decision — refused with
 * its rule and reasons, or promoted: challenger → champion, champion → retired, in the same
 * transaction as the decision, its evaluations and the audit entry.
 */

export interface PromotionRequest {
  challengerVersion: string;
  goldId: string;
  /** Runs the caller names instead of the gate's own choice. */
  challengerRunId: string | null;
  championRunId: string | null;
  /** Curation slices compared besides the frame-context slices. */
  sliceIds: string[];
  actor: Actor;
}

export interface PromotionPlan {
  championVersion: string;
  challenger: GoldRun;
  /** Null when the challenger's run is reconstructed: there is nothing to compare. */
  champion: GoldRun | null;
}

export interface PromotionOutcome {
  promotion_id: string;
  outcome: 'promoted' | 'refused' | 'reverted';
  rule: string | null;
  reasons: unknown;
}

export const promotionOut = (p: Promotion) => ({
  id: p.id,
  task: p.task,
  challenger_version: p.challengerVersion,
  champion_version: p.championVersion,
  outcome: p.outcome,
  rule: p.rule,
  reasons: p.reasons,
  gold_id: p.goldId,
  reverts_id: p.revertsId,
  reverted_at: p.revertedAt?.toISOString() ?? null,
  actor_id: p.actorId,
  created_at: p.createdAt.toISOString(),
});

/** A challenger the gate may judge: registered (404) and not already the champion (409). */
export async function promotableChallenger(db: Db, modelVersion: string): Promise<Model> {
  const model = await findModel(db, modelVersion);
  if (model.state === 'champion')
    throw new ConflictError(`model ${modelVersion} is already the champion of ${model.task}`);
  return model;
}

/** Which runs the gate compares, queuing a GPU run for a side that has none on the gold set. */
export async function planPromotion(deps: ActivityDeps, req: PromotionRequest): Promise<PromotionPlan> {
  const challenger = await promotableChallenger(deps.db, req.challengerVersion);
  const champion = await currentChampion(deps, challenger.task);
  const challengerRun = await runOnGold(
    deps.db,
    {
      modelVersion: challenger.modelVersion,
      goldId: req.goldId,
      runId: req.challengerRunId,
      field: 'challenger_run_id',
    },
    req.actor,
  );
  if (challengerRun.reconstructed)
    return { championVersion: champion.modelVersion, challenger: challengerRun, champion: null };
  const championRun = await runOnGold(
    deps.db,
    {
      modelVersion: champion.modelVersion,
      goldId: req.goldId,
      runId: req.championRunId,
      field: 'champion_run_id',
    },
    req.actor,
  );
  return { championVersion: champion.modelVersion, challenger: challengerRun, champion: championRun };
}

interface GateScope extends Scope {
  name: string;
  kind: 'all' | 'context' | 'slice';
  slice_id: string | null;
  not_applied: string[];
}

/** Both runs on the gold set, per scope, with the evidence the rules read. */
async function gatherEvidence(deps: ActivityDeps, req: PromotionRequest, plan: PromotionPlan) {
  const { db, config } = deps;
  const cfg = config.promotion;
  const challengerRun = await usableRun(db, plan.challenger.runId, 'challenger_run_id');
  const championRun = await usableRun(db, plan.champion!.runId, 'champion_run_id');
  const { gold, frames, boxes } = await loadGold(db, req.goldId);
  const [challengerPreds, championPreds, contexts, slices, names, safety] = await Promise.all([
    loadPredictions(db, challengerRun, gold.frameIds),
    loadPredictions(db, championRun, gold.frameIds),
    frameContexts(db, gold.frameIds),
    sliceScopes(db, req.sliceIds, gold.frameIds),
    classNames(db),
    safetyClasses(db, config),
  ]);
  const epsilon = parityEpsilon(config);
  const stats = { alpha: cfg.alpha, nBoot: cfg.nBoot, seed: cfg.seed };
  const scopes: GateScope[] = [
    { name: 'all', kind: 'all', slice_id: null, frameIds: gold.frameIds, classIds: null, not_applied: [] },
    ...contextSlices(contexts).map((c) => ({
      name: c.name,
      kind: 'context' as const,
      slice_id: null,
      frameIds: c.frameIds,
      classIds: null,
      not_applied: [],
    })),
    ...slices.map((s) => ({
      name: `slice ${s.slice_name}`,
      kind: 'slice' as const,
      slice_id: s.slice_id,
      ...s.scope,
      not_applied: s.not_applied,
    })),
  ];
  const harness: HarnessCheck[] = [];
  const compared = scopes.map((scope) => {
    const kept = new Set(scope.frameIds);
    const scopeFrames = frames.filter((f: EvalFrame) => kept.has(f.id));
    const goldIn: EvalGoldBox[] = inScope(boxes, scope);
    const side = (run: InferenceRun, all: EvalPrediction[]) => {
      const predictions = inScope(all, scope);
      return {
        predictions,
        evaluation: evaluateOnGold(
          run,
          gold,
          { frames: scopeFrames, boxes: goldIn, predictions },
          names,
          epsilon,
        ),
      };
    };
    const c = side(challengerRun, challengerPreds);
    const p = side(championRun, championPreds);
    for (const [which, e] of [
      ['challenger', c.evaluation],
      ['champion', p.evaluation],
    ] as const)
      harness.push({
        scope: scope.name,
        side: which,
        within: e.result.parity.within,
        epsilon,
        max_abs_delta: e.result.parity.max_abs_delta,
        diverging: e.result.parity.diverging.map((d) => d.metric),
      });
    const significance = mapDifferenceTest(
      matchAtThresholds(goldIn, c.predictions, scope.frameIds),
      matchAtThresholds(goldIn, p.predictions, scope.frameIds),
      stats,
    );
    return { scope, challenger: c.evaluation, champion: p.evaluation, significance };
  });
  const whole = compared[0]!;
  const floors = judgeSafety(safety, boxes, challengerPreds, gold.frameIds, whole.challenger, cfg);
  const decision = judgeChallenger({
    challenger: req.challengerVersion,
    champion: plan.championVersion,
    harness,
    safety: floors,
    significance: whole.significance,
  });
  const report = {
    gold_id: gold.id,
    gold_content_hash: gold.contentHash,
    iou_thr: GATE_IOU,
    parity_epsilon: epsilon,
    runs: { challenger: plan.challenger, champion: plan.champion },
    significance: whole.significance,
    safety: floors,
    harness,
    slices: compared.map(({ scope, challenger, champion, significance }) => ({
      name: scope.name,
      kind: scope.kind,
      slice_id: scope.slice_id,
      not_applied: scope.not_applied,
      ...compareScope(challenger.result, champion.result),
      significance,
    })),
  };
  return { decision, report, evaluations: [whole.challenger, whole.champion] };
}

/** The decision of this workflow run, when an earlier attempt of the activity already recorded it. */
async function recordedDecision(db: Db, workflowRunId: string): Promise<Promotion | null> {
  return db.promotion.findFirst({ where: { report: { path: ['workflow_run_id'], equals: workflowRunId } } });
}

const outcomeOf = (p: Promotion): PromotionOutcome => ({
  promotion_id: p.id,
  outcome: p.outcome as PromotionOutcome['outcome'],
  rule: p.rule,
  reasons: p.reasons,
});

/**
 * Records the decision; a promotion also moves the states, in the same transaction: the champion
 * the gate compared against must still be the champion (else refused, `champion_changed`: another
 * promotion won the race) and the challenger must not have become it meanwhile.
 */
async function recordDecision(
  deps: ActivityDeps,
  req: PromotionRequest,
  plan: PromotionPlan,
  workflowRunId: string,
  decision: GateDecision,
  report: Record<string, unknown>,
  evaluations: ReadonlyArray<Parameters<typeof recordGoldEvaluation>[1]>,
): Promise<PromotionOutcome> {
  const { db } = deps;
  const challenger = await findModel(db, req.challengerVersion);
  const promotion = await db.$transaction(async (tx) => {
    const ops = [];
    for (const e of evaluations) ops.push((await recordGoldEvaluation(tx, e, req.actor)).id);
    let final = decision;
    if (final.outcome === 'promoted') {
      // Row locks: two gates deciding at once serialize here.
      await tx.$queryRaw`SELECT id FROM models WHERE task = ${challenger.task} AND (state = 'champion' OR model_version = ${challenger.modelVersion}) FOR UPDATE`;
      const champion = await tx.model.findFirst({ where: { task: challenger.task, state: 'champion' } });
      if (champion?.modelVersion !== plan.championVersion)
        final = refusal(
          'champion_changed',
          `the champion changed while ${req.challengerVersion} was evaluated against ${plan.championVersion} (it is now ${champion?.modelVersion ?? 'none'}): run the gate again`,
        );
      else {
        const now = new Date();
        await tx.model.update({ where: { id: champion.id }, data: { state: 'retired', retiredAt: now } });
        await tx.model.update({
          where: { id: challenger.id },
          data: { state: 'champion', promotedAt: now, retiredAt: null },
        });
      }
    }
    const row = await tx.promotion.create({
      data: {
        task: challenger.task,
        challengerVersion: req.challengerVersion,
        championVersion: plan.championVersion,
        outcome: final.outcome,
        rule: final.rule,
        reasons: final.reasons as unknown as Prisma.InputJsonValue,
        report: {
          ...report,
          workflow_run_id: workflowRunId,
          evaluation_operation_ids: ops,
        } as Prisma.InputJsonValue,
        goldId: req.goldId,
        actorId: req.actor.userId,
      },
    });
    // With the refusal, never after it: a refusal whose shortfalls were not kept cannot be collected for.
    const directed = await recordGateDirectedRun(tx, row, deps.config.flywheel);
    await recordAudit(tx, {
      actorId: req.actor.userId,
      action: final.outcome === 'promoted' ? 'model.promote' : 'model.promotion_refused',
      subjectType: 'promotion',
      subjectId: row.id,
      detail: {
        challenger_version: row.challengerVersion,
        champion_version: row.championVersion,
        outcome: row.outcome,
        rule: row.rule,
        gold_id: row.goldId,
        gate_directed_run_id: directed?.id ?? null,
      },
      requestId: req.actor.requestId,
    });
    return row;
  });
  return outcomeOf(promotion);
}

/** Evaluates and judges (or refuses a reconstructed challenger run), then records the decision. */
export async function decidePromotion(
  deps: ActivityDeps,
  input: { request: PromotionRequest; plan: PromotionPlan; workflowRunId: string },
): Promise<PromotionOutcome> {
  const { request: req, plan, workflowRunId } = input;
  const earlier = await recordedDecision(deps.db, workflowRunId);
  if (earlier) return outcomeOf(earlier);
  if (plan.challenger.reconstructed || !plan.champion)
    return recordDecision(
      deps,
      req,
      plan,
      workflowRunId,
      refusal(
        'reconstructed_run',
        `the challenger's run ${plan.challenger.runId} is reconstructed from history (null confidences): it cannot be evaluated, so ${req.challengerVersion} cannot be promoted on it`,
      ),
      { gold_id: req.goldId, runs: { challenger: plan.challenger, champion: null } },
      [],
    );
  const { decision, report, evaluations } = await gatherEvidence(deps, req, plan);
  return recordDecision(deps, req, plan, workflowRunId, decision, report, evaluations);
}

/** A refusal the gate records when it could not gather its evidence (an inference run failed). */
export async function refusePromotion(
  deps: ActivityDeps,
  input: {
    request: PromotionRequest;
    plan: PromotionPlan;
    workflowRunId: string;
    rule: GateRule;
    reason: string;
  },
): Promise<PromotionOutcome> {
  const earlier = await recordedDecision(deps.db, input.workflowRunId);
  if (earlier) return outcomeOf(earlier);
  return recordDecision(
    deps,
    input.request,
    input.plan,
    input.workflowRunId,
    refusal(input.rule, input.reason),
    {
      gold_id: input.request.goldId,
      runs: { challenger: input.plan.challenger, champion: input.plan.champion },
    },
    [],
  );
}

/**
 * Undoes a promotion (POST /api/govern/promote with `revert`): the champion it replaced is champion
 * again and the model it promoted is a candidate again, in one transaction with a `reverted`
 * decision and the audit entry. Only the latest promotion of a task can be undone — the model it
 * promoted must still be the champion — and only once.
 */
export async function revertPromotion(db: Db, promotionId: string, actor: Actor) {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM promotions WHERE id = ${promotionId}::uuid FOR UPDATE`;
    const p = await tx.promotion.findUnique({ where: { id: promotionId } });
    if (!p) throw new NotFoundError(`no promotion ${promotionId}`);
    if (p.outcome !== 'promoted')
      throw new ConflictError(
        `promotion ${p.id} is a ${p.outcome} decision: only a promotion can be reverted`,
      );
    if (p.revertedAt)
      throw new ConflictError(`promotion ${p.id} was already reverted at ${p.revertedAt.toISOString()}`);
    await tx.$queryRaw`SELECT id FROM models WHERE task = ${p.task} FOR UPDATE`;
    const promoted = await tx.model.findUnique({ where: { modelVersion: p.challengerVersion } });
    if (promoted?.state !== 'champion')
      throw new ConflictError(
        `${p.challengerVersion} is no longer the champion (a later promotion replaced it): revert that one first`,
      );
    const previous = p.championVersion
      ? await tx.model.findUnique({ where: { modelVersion: p.championVersion } })
      : null;
    if (!previous) throw new ConflictError(`the champion promotion ${p.id} replaced is no longer registered`);
    const now = new Date();
    await tx.model.update({ where: { id: promoted.id }, data: { state: 'candidate', retiredAt: null } });
    const restored = await tx.model.update({
      where: { id: previous.id },
      data: { state: 'champion', retiredAt: null },
    });
    await tx.promotion.update({ where: { id: p.id }, data: { revertedAt: now } });
    const reversal = await tx.promotion.create({
      data: {
        task: p.task,
        challengerVersion: p.challengerVersion,
        championVersion: p.championVersion,
        outcome: 'reverted',
        reasons: [],
        report: {},
        goldId: p.goldId,
        revertsId: p.id,
        actorId: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'model.promotion_revert',
      subjectType: 'promotion',
      subjectId: reversal.id,
      detail: { reverts: p.id, champion_restored: restored.modelVersion, demoted: promoted.modelVersion },
      requestId: actor.requestId,
    });
    return {
      ...promotionOut(reversal),
      champion: registryModelOut(restored),
    };
  });
}

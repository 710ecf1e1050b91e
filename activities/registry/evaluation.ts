import { LIGHTING_SQL } from '../../core/curation/slice';
import { UnavailableError } from '../../core/errors';
import {
  classCounts,
  evaluateScope,
  matchRun,
  type EvalFrame,
  type EvalGoldBox,
  type EvalPrediction,
} from '../../core/evalgov';
import { safetyFloors, type FrameContext, type SafetyClass, type SafetyFloors } from '../../core/registry';
import type { AppConfig } from '../../core/config';
import type { GoldSet, InferenceRun, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { EVALUATE_OP, type EvaluateParams, type StoredEvaluation } from '../evalgov/evaluate';
import { loadGold, loadPredictions, ontologyRows, parityEpsilon } from '../evalgov/scope';
import { recordOperation } from '../quality/operations';

/**
 * What the gate and the champion sweep share: a run's whole-gold-set evaluation with the quality
 * issue's evaluator (core/evalgov evaluateScope: both COCO harnesses and their parity), recorded as
 * an `evalgov_evaluate` operation so that it shows in the evaluation matrix, the pairs and each
 * model's evaluations like any other; the frames' context; the configured safety classes.
 */

/** The IoU threshold of the gate's counts, recall and AP50 (COCO's AP50 threshold). */
export const GATE_IOU = 0.5;

export interface GoldEvaluation {
  params: EvaluateParams;
  result: StoredEvaluation;
}

/** A run evaluated on every frame of a gold set, as POST /api/evalgov/evaluate evaluates the whole set. */
export function evaluateOnGold(
  run: InferenceRun,
  gold: GoldSet,
  data: { frames: EvalFrame[]; boxes: EvalGoldBox[]; predictions: EvalPrediction[] },
  names: ReadonlyMap<number, string>,
  epsilon: number,
): GoldEvaluation {
  const e = evaluateScope(data.frames, data.boxes, data.predictions, { iouThr: GATE_IOU, epsilon });
  return {
    params: {
      run_id: run.id,
      gold_id: gold.id,
      model_version: run.modelVersion,
      slice_id: null,
      slice_name: null,
      iou_thr: GATE_IOU,
      parity_epsilon: epsilon,
      not_applied: [],
    },
    result: { ...e, classes: e.classes.map((c) => ({ ...c, class_name: names.get(c.class_id) ?? null })) },
  };
}

export function recordGoldEvaluation(
  tx: Db | Prisma.TransactionClient,
  evaluation: GoldEvaluation,
  actor: Actor | null,
) {
  const p = evaluation.params;
  return recordOperation(tx, {
    opType: EVALUATE_OP,
    subjectIds: [p.run_id, p.gold_id, p.model_version],
    params: p,
    result: evaluation.result,
    actor,
  });
}

/** Each frame's lighting (derived from its measured exposure) and recorded weather. */
export async function frameContexts(db: Db, frameIds: readonly string[]): Promise<FrameContext[]> {
  if (!frameIds.length) return [];
  const rows = await db.$queryRawUnsafe<FrameContext[]>(
    `SELECT f.id::text AS id, (${LIGHTING_SQL}) AS lighting, f.context->>'weather' AS weather
       FROM frames f WHERE f.id = ANY($1::uuid[])`,
    [...frameIds],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  // A gold frame outlives its live frame: its context is then unknown.
  return frameIds.map((id) => byId.get(id) ?? { id, lighting: 'unknown', weather: null });
}

/**
 * The safety classes config.promotion.safetyClasses names: ontology class names, or l1 groups
 * standing for all their classes. A name that is neither is a configuration error, refused by
 * name rather than ignored (an ignored safety class would be a floor silently dropped).
 */
export async function safetyClasses(db: Db, config: Pick<AppConfig, 'promotion'>): Promise<SafetyClass[]> {
  const wanted = config.promotion.safetyClasses
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const ontology = await ontologyRows(db);
  const unknown = wanted.filter((w) => !ontology.some((o) => o.name === w || o.l1 === w));
  if (unknown.length)
    throw new UnavailableError(
      `the promotion gate's safety classes name ${unknown.join(', ')}, neither an ontology class nor an l1 group (set APP_PROMOTION__SAFETY_CLASSES)`,
    );
  return ontology
    .filter((o) => wanted.includes(o.name) || wanted.includes(o.l1))
    .sort((a, b) => a.id - b.id)
    .map((o) => ({ class_id: o.id, class_name: o.name }));
}

/** Class names by id, for readable evaluations and reasons. */
/** Ontology class names by id, inside a transaction or out of one. */
export async function classNames(db: Db | Prisma.TransactionClient): Promise<Map<number, string>> {
  return new Map((await ontologyRows(db)).map((o) => [o.id, o.name]));
}

/**
 * A run's safety classes against the configured floors on a gold set: recall at the operating
 * point (conf ≥ confThr, IoU .50) and the evaluation's COCO AP50.
 */
export function judgeSafety(
  safety: readonly SafetyClass[],
  boxes: readonly EvalGoldBox[],
  predictions: readonly EvalPrediction[],
  frameIds: readonly string[],
  evaluation: GoldEvaluation,
  cfg: AppConfig['promotion'],
): SafetyFloors {
  const operating = classCounts(matchRun(boxes, predictions, frameIds, GATE_IOU), cfg.confThr);
  const ap50 = new Map(evaluation.result.classes.map((c) => [c.class_id, c.ap50]));
  return safetyFloors(safety, operating, ap50, {
    apFloor: cfg.safetyApFloor,
    recallFloor: cfg.safetyRecallFloor,
    confThr: cfg.confThr,
  });
}

/** A usable run evaluated on a whole gold set and judged against the safety floors (not yet recorded). */
export async function evaluateRunOnGold(
  db: Db,
  config: AppConfig,
  run: InferenceRun,
  goldId: string,
  shared: { names: ReadonlyMap<number, string>; safety: readonly SafetyClass[] },
) {
  const { gold, frames, boxes } = await loadGold(db, goldId);
  const predictions = await loadPredictions(db, run, gold.frameIds);
  const evaluation = evaluateOnGold(
    run,
    gold,
    { frames, boxes, predictions },
    shared.names,
    parityEpsilon(config),
  );
  const safety = judgeSafety(shared.safety, boxes, predictions, gold.frameIds, evaluation, config.promotion);
  return { gold, evaluation, safety };
}

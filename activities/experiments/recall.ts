import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import { matchRun, type EvalPrediction } from '../../core/evalgov';
import type { Box } from '../../core/geometry';
import { missedGold, recallReliability } from '../../core/registry';
import type { InferenceRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { loadGold, loadPredictions, ontologyRows, usableRun } from '../evalgov/scope';
import { recordOperation } from '../quality/operations';
import { completedGoldRun, namedRun } from '../registry/runs';

/**
 * What a model misses on gold and how far its recall can be trusted (docs/experiments.md): both
 * read a model version's run on a gold set — the one named, else its latest evidence there (a GPU
 * run over the set, or a run registered or evaluated on it).
 */

export const RECALL_RELIABILITY_OP = 'recall_reliability';
/** Most work one reliability request does: frames × n_boot × classes resampled (a few seconds). */
export const RELIABILITY_MAX_WORK = 50_000_000;

async function evidenceRun(
  db: Db,
  q: { model_version: string; gold_id: string; run_id?: string | undefined },
): Promise<InferenceRun> {
  if (q.run_id) {
    const run = await namedRun(db, q.run_id, q.model_version, 'run_id');
    return usableRun(db, run.id);
  }
  const run = await completedGoldRun(db, q.model_version, q.gold_id);
  if (!run)
    throw new NotFoundError(
      `model ${q.model_version} has no completed run on gold set ${q.gold_id}: run it (POST /api/inference-runs with mode gpu, gold_id and model_version) or register a run (POST /api/govern/registry/register_run)`,
    );
  return run;
}

/** GET /api/activelearn/false-negatives: the gold objects the run misses, per class, with their frames. */
export async function falseNegatives(
  db: Db,
  q: {
    model_version: string;
    gold_id: string;
    run_id?: string | undefined;
    iou: number;
    conf_thr: number;
    limit: number;
  },
) {
  const { gold } = await loadGold(db, q.gold_id);
  const run = await evidenceRun(db, q);
  const [items, predictions, ontology] = await Promise.all([
    db.goldItem.findMany({
      where: { goldId: gold.id },
      select: { objectId: true, frameId: true, sessionId: true, classId: true, bbox: true },
      orderBy: [{ frameId: 'asc' }, { objectId: 'asc' }],
    }),
    loadPredictions(db, run, gold.frameIds),
    ontologyRows(db),
  ]);
  const names = new Map(ontology.map((o) => [o.id, o.name]));
  const objects = items.map((i) => ({
    object_id: i.objectId,
    frame_id: i.frameId,
    session_id: i.sessionId,
    class_id: i.classId,
    bbox: i.bbox as Box,
  }));
  const missed = missedGold(objects, predictions, { iouThr: q.iou, confThr: q.conf_thr });
  const goldOf = new Map<number, number>();
  for (const o of objects) goldOf.set(o.class_id, (goldOf.get(o.class_id) ?? 0) + 1);
  let listed = 0;
  const classes = [...goldOf.keys()]
    .sort((a, b) => a - b)
    .map((classId) => {
      const mine = missed.filter((m) => m.class_id === classId);
      const shown = mine.slice(0, Math.max(0, q.limit - listed));
      listed += shown.length;
      const total = goldOf.get(classId)!;
      return {
        class_id: classId,
        class_name: names.get(classId) ?? null,
        gold: total,
        missed: mine.length,
        recall: (total - mine.length) / total,
        objects: shown,
      };
    })
    .filter((c) => c.missed > 0);
  return {
    model_version: run.modelVersion,
    run_id: run.id,
    gold_id: gold.id,
    iou: q.iou,
    conf_thr: q.conf_thr,
    gold: objects.length,
    missed: missed.length,
    listed,
    truncated: listed < missed.length,
    classes,
  };
}

export interface ReliabilityInput {
  model_version: string;
  gold_id: string;
  run_id?: string | undefined;
  iou_thr: number;
  conf_thr: number;
  alpha: number;
  n_boot: number;
  seed: number;
  min_sample: number;
  max_width: number;
}

/** POST /api/activelearn/recall-reliability: recall per class with its bootstrap interval, and whether to trust it. */
export async function recallReliabilityOf(db: Db, input: ReliabilityInput, actor: Actor) {
  const { gold, boxes } = await loadGold(db, input.gold_id);
  const run = await evidenceRun(db, input);
  const predictions: EvalPrediction[] = await loadPredictions(db, run, gold.frameIds);
  const matching = matchRun(boxes, predictions, gold.frameIds, input.iou_thr);
  const classes = matching.classes.filter((c) => c.gold > 0).length;
  const work = gold.frameIds.length * input.n_boot * classes;
  if (work > RELIABILITY_MAX_WORK)
    throw new InputError(
      `${gold.frameIds.length} frames × ${input.n_boot} resamples × ${classes} classes is more than one request computes (${work} > ${RELIABILITY_MAX_WORK}): lower n_boot`,
      [{ field: 'body.n_boot', message: 'too many resamples for this gold set' }],
    );
  if (!classes)
    throw new RefusedError(`gold set ${gold.id} holds no object: no recall to measure`, {
      reason: 'empty_gold',
    });
  const ontology = await ontologyRows(db);
  const byId = new Map(ontology.map((o) => [o.id, o]));
  const result = {
    classes: recallReliability(matching, {
      confThr: input.conf_thr,
      alpha: input.alpha,
      nBoot: input.n_boot,
      seed: input.seed,
      minSample: input.min_sample,
      maxWidth: input.max_width,
    }).map((c) => ({
      ...c,
      class_name: byId.get(c.class_id)?.name ?? null,
      l1: byId.get(c.class_id)?.l1 ?? null,
    })),
  };
  const params = { ...input, run_id: run.id, model_version: run.modelVersion, frames: gold.frameIds.length };
  const op = await recordOperation(db, {
    opType: RECALL_RELIABILITY_OP,
    subjectIds: [run.id, gold.id, run.modelVersion],
    params,
    result,
    actor,
  });
  return {
    operation_id: op.id,
    ...params,
    interval: 'percentile bootstrap over frames, the recall recomputed as a ratio per resample',
    ...result,
  };
}

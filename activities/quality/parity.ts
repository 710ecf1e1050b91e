import { ConflictError, RefusedError } from '../../core/errors';
import { cocoInputOf, harnessParity } from '../../core/quality/parity';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { findGold } from './gold';
import { findRun } from './inference-runs';
import { recordOperation } from './operations';

/**
 * Harness parity of a run against a gold set (POST /api/platform/reconcile/parity,
 * docs/quality-measure.md): both COCO harnesses over the gold frames, every figure compared at
 * epsilon, recorded as eval operation `parity` (what the promotion gate reads). A reconstructed run
 * is refused by name; a run that has not completed is a conflict.
 */
export async function reconcileParity(
  db: Db,
  input: { run_id: string; gold_id: string; epsilon: number },
  actor: Actor,
) {
  const gold = await findGold(db, input.gold_id);
  const run = await findRun(db, input.run_id);
  if (run.reconstructed)
    throw new RefusedError(
      `inference run ${run.id} is reconstructed (null confidences): AP evaluation is refused`,
      { reason: 'reconstructed' },
    );
  if (run.status !== 'completed')
    throw new ConflictError(`inference run ${run.id} is ${run.status}, not completed`);
  const [frames, items, predictions] = await Promise.all([
    db.frame.findMany({
      where: { id: { in: gold.frameIds } },
      select: { id: true, width: true, height: true },
    }),
    db.goldItem.findMany({
      where: { goldId: gold.id },
      select: { frameId: true, classId: true, bbox: true },
    }),
    db.prediction.findMany({
      where: { runId: run.id, frameId: { in: gold.frameIds }, conf: { not: null } },
      select: { frameId: true, classId: true, conf: true, bbox: true },
    }),
  ]);
  // A gold frame whose live row is gone keeps its items: its size is then their extent.
  const known = new Set(frames.map((f) => f.id));
  const missingFrames = gold.frameIds
    .filter((id) => !known.has(id))
    .map((id) => {
      const boxes = items.filter((i) => i.frameId === id).map((i) => i.bbox);
      return {
        frame_id: id,
        width: Math.max(1, ...boxes.map((b) => b[2]!)),
        height: Math.max(1, ...boxes.map((b) => b[3]!)),
      };
    });
  const input_ = cocoInputOf(
    [...frames.map((f) => ({ frame_id: f.id, width: f.width, height: f.height })), ...missingFrames],
    items.map((i) => ({ frame_id: i.frameId, class_id: i.classId, bbox: i.bbox })),
    predictions.map((p) => ({ frame_id: p.frameId, class_id: p.classId, bbox: p.bbox, conf: p.conf! })),
  );
  const report = harnessParity(input_, input.epsilon);
  const result = {
    within: report.comparison.within,
    epsilon: input.epsilon,
    images: report.images,
    ground_truth: report.ground_truth,
    detections: report.detections,
    diverging: report.diverging,
    divergences: report.comparison.divergences,
    harnesses: { primary: 'evaluateCoco (pycocotools-equal)', secondary: 'StreamingBoxEvaluator' },
    primary: report.primary,
    secondary: report.secondary,
  };
  const op = await recordOperation(db, {
    opType: 'parity',
    subjectIds: [gold.id, run.id, run.modelVersion],
    params: { gold_id: gold.id, run_id: run.id, model_version: run.modelVersion, epsilon: input.epsilon },
    result,
    actor,
  });
  return {
    operation_id: op.id,
    gold_id: gold.id,
    run_id: run.id,
    model_version: run.modelVersion,
    ...result,
  };
}

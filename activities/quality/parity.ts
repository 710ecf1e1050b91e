import { cocoInputOf, harnessParity } from '../../core/quality/parity';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { findGold } from './gold';
import { measurableRun } from './inference-runs';
import { recordRunGoldOperation } from './operations';

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
  const run = await measurableRun(db, input.run_id);
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
  return recordRunGoldOperation(db, 'parity', { gold, run }, { epsilon: input.epsilon }, result, actor);
}

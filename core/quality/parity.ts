import {
  compareHarnesses,
  evaluateCoco,
  evaluateStreaming,
  harnessMetricsOf,
  type CocoEvaluationInput,
  type HarnessComparison,
  type HarnessMetrics,
} from '../metrics/coco';

/**
 * Harness parity (POST /api/platform/reconcile/parity, docs/quality-measure.md): a run's
 * predictions against a gold set, evaluated by both COCO harnesses of core/metrics/coco — the
 * pycocotools-equal evaluator (evaluateCoco) and the independent streaming one — and compared
 * figure by figure (compareHarnesses): each headline metric and each category's AP.
 *
 * The gold set becomes a COCO dataset: one image per gold frame (ids 1… in frame id order, with the
 * frame's size), one ground truth per gold item (area = its box's, never crowd), one category per
 * class of the gold items or the predictions; every prediction on a gold frame is a detection.
 * Boxes go from [x1, y1, x2, y2] to COCO's [x, y, w, h].
 */

export interface ParityFrame {
  frame_id: string;
  width: number;
  height: number;
}
export interface ParityBox {
  frame_id: string;
  class_id: number;
  bbox: readonly number[];
}
export interface ParityPrediction extends ParityBox {
  conf: number;
}

export function cocoInputOf(
  frames: readonly ParityFrame[],
  gold: readonly ParityBox[],
  predictions: readonly ParityPrediction[],
): CocoEvaluationInput {
  const sorted = [...frames].sort((a, b) => (a.frame_id < b.frame_id ? -1 : a.frame_id > b.frame_id ? 1 : 0));
  const imageOf = new Map(sorted.map((f, i) => [f.frame_id, i + 1]));
  const xywh = (b: readonly number[]) => [b[0]!, b[1]!, b[2]! - b[0]!, b[3]! - b[1]!] as const;
  const categories = [...new Set([...gold, ...predictions].map((b) => b.class_id))]
    .sort((a, b) => a - b)
    .map((id) => ({ id }));
  return {
    images: sorted.map((f, i) => ({ id: i + 1, width: f.width, height: f.height })),
    categories,
    groundTruth: gold
      .filter((g) => imageOf.has(g.frame_id))
      .map((g, i) => {
        const box = xywh(g.bbox);
        return {
          id: i + 1,
          image_id: imageOf.get(g.frame_id)!,
          category_id: g.class_id,
          bbox: box,
          area: box[2] * box[3],
          iscrowd: 0,
        };
      }),
    detections: predictions
      .filter((p) => imageOf.has(p.frame_id))
      .map((p) => ({
        image_id: imageOf.get(p.frame_id)!,
        category_id: p.class_id,
        bbox: xywh(p.bbox),
        score: p.conf,
      })),
  };
}

export interface ParityReport {
  images: number;
  ground_truth: number;
  detections: number;
  primary: HarnessMetrics;
  secondary: HarnessMetrics;
  comparison: HarnessComparison;
  /** The figures beyond epsilon (or missing on one side). */
  diverging: HarnessComparison['divergences'];
}

/** Both harnesses on one dataset, compared at `epsilon`. */
export function harnessParity(input: CocoEvaluationInput, epsilon: number): ParityReport {
  const primary = harnessMetricsOf(evaluateCoco(input, 'bbox'));
  const secondary = evaluateStreaming(input);
  const comparison = compareHarnesses(primary, secondary, epsilon);
  return {
    images: input.images.length,
    ground_truth: input.groundTruth.length,
    detections: input.detections.length,
    primary,
    secondary,
    comparison,
    diverging: comparison.divergences.filter((d) => d.diverges),
  };
}

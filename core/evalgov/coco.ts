import {
  COCO_STAT_NAMES,
  HEADLINE_METRICS,
  compareHarnesses,
  evaluateCoco,
  evaluateStreaming,
  harnessMetricsOf,
  type CocoEvaluationInput,
  type CocoStatName,
  type HarnessDivergence,
  type HeadlineMetric,
} from '../metrics/coco';
import type { EvalGoldBox, EvalPrediction } from './match';

/**
 * An evaluation scope (frames, gold boxes, predictions) through both COCO harnesses of
 * core/metrics/coco — the pycocotools-equal evaluator and the independent streaming one — with
 * their comparison. Our boxes are [x1, y1, x2, y2]; COCO's are [x, y, width, height], and an
 * object's area (which decides its area range) is its box's.
 */

/** The divergence the promotion gate tolerates between the two harnesses when no config names one. */
export const DEFAULT_PARITY_EPSILON = 1e-6;

export interface EvalFrame {
  id: string;
  width: number;
  height: number;
}

/** [x1, y1, x2, y2] → COCO's [x, y, w, h]. */
export const toCocoBox = (b: readonly number[]): [number, number, number, number] => [
  b[0]!,
  b[1]!,
  Math.max(0, b[2]! - b[0]!),
  Math.max(0, b[3]! - b[1]!),
];

/**
 * The scope as COCO input: frame i is image i + 1 (so score ties across images go in frame order),
 * gold box j is ground truth j + 1 (COCO reads id 0 as "no match"), every class seen is a category.
 * Boxes on frames outside `frames` are left out.
 */
export function cocoInputOf(
  frames: readonly EvalFrame[],
  gold: readonly EvalGoldBox[],
  predictions: readonly EvalPrediction[],
): CocoEvaluationInput {
  const imageOf = new Map(frames.map((f, i) => [f.id, i + 1]));
  const categories = new Set<number>();
  const groundTruth = gold.flatMap((g) => {
    const image_id = imageOf.get(g.frame_id);
    if (image_id === undefined) return [];
    categories.add(g.class_id);
    const bbox = toCocoBox(g.bbox);
    return [{ image_id, category_id: g.class_id, bbox, area: bbox[2] * bbox[3], iscrowd: 0 }];
  });
  const detections = predictions.flatMap((p) => {
    const image_id = imageOf.get(p.frame_id);
    if (image_id === undefined) return [];
    categories.add(p.class_id);
    return [{ image_id, category_id: p.class_id, bbox: toCocoBox(p.bbox), score: p.conf }];
  });
  return {
    images: frames.map((f, i) => ({ id: i + 1, width: f.width, height: f.height })),
    categories: [...categories].sort((a, b) => a - b).map((id) => ({ id })),
    groundTruth: groundTruth.map((g, j) => ({ id: j + 1, ...g })),
    detections,
  };
}

/** COCO's -1 ("nothing measurable") as null. */
const figure = (v: number | undefined): number | null => (v === undefined || v < 0 ? null : v);

export interface HarnessReport {
  /** The twelve COCOeval.stats of the primary harness, by name; null where nothing was measurable. */
  coco: Record<CocoStatName, number | null>;
  /** Per category of the primary harness: AP over IoU .50:.95, AP50 and AR100 (null without gold). */
  per_class: Array<{ class_id: number; ap: number | null; ap50: number | null; ar100: number | null }>;
  /** The streaming harness's headline figures (every stat but AR1 and AR10). */
  streaming: Record<HeadlineMetric, number | null>;
  parity: {
    /** Every compared figure within epsilon: what the promotion gate asks. */
    within: boolean;
    epsilon: number;
    compared: number;
    /** Largest |secondary − primary| over the figures both give; 0 when nothing was compared. */
    max_abs_delta: number;
    /** The figures beyond epsilon (or missing on one side), at most 50. */
    diverging: HarnessDivergence[];
  };
}

/** Both harnesses over one scope, and whether they agree within `epsilon`. */
export function evaluateHarnesses(input: CocoEvaluationInput, epsilon: number): HarnessReport {
  const primary = evaluateCoco(input, 'bbox');
  const secondary = evaluateStreaming(input);
  const comparison = compareHarnesses(harnessMetricsOf(primary), secondary, epsilon);
  const deltas = comparison.divergences.flatMap((d) => (d.delta === null ? [] : [Math.abs(d.delta)]));
  return {
    coco: Object.fromEntries(COCO_STAT_NAMES.map((name, i) => [name, figure(primary.stats[i])])) as Record<
      CocoStatName,
      number | null
    >,
    per_class: primary.perCategory.map((c) => ({
      class_id: c.categoryId,
      ap: figure(c.ap),
      ap50: figure(c.ap50),
      ar100: figure(c.ar100),
    })),
    streaming: Object.fromEntries(
      HEADLINE_METRICS.map((name) => [name, figure(secondary.headline[name])]),
    ) as Record<HeadlineMetric, number | null>,
    parity: {
      within: comparison.within,
      epsilon,
      compared: comparison.divergences.length,
      max_abs_delta: deltas.length ? Math.max(...deltas) : 0,
      diverging: comparison.divergences.filter((d) => d.diverges).slice(0, 50),
    },
  };
}

import type { Box } from '../geometry';
import { cocoInputOf } from '../evalgov/coco';
import { evaluateCoco } from '../metrics/coco';

/** Validation figures of a detector: AP@0.5 per class with ground truth, and their mean. */
export interface DetectionMetrics {
  map50: number;
  /** Class index (as a string key) → AP@0.5; only classes with ground truth in the split. */
  ap50ByClass: Record<string, number>;
}

export interface EvalImage {
  id: string;
  width: number;
  height: number;
  boxes: ReadonlyArray<{ bbox: Box | readonly [number, number, number, number]; classIndex: number }>;
}

export interface EvalDetection {
  box: Box;
  score: number;
  classIndex: number;
}

/**
 * AP@0.5 with the pycocotools-equal evaluator (core/metrics/coco), detections of image i being
 * `detections[i]`. A detection of a class without ground truth in the split is left out: COCO
 * would give that class no AP anyway, and the split's classes are what the figures are about.
 */
export function detectionMetrics(
  images: readonly EvalImage[],
  detections: ReadonlyArray<readonly EvalDetection[]>,
): DetectionMetrics {
  const classes = new Set(images.flatMap((im) => im.boxes.map((b) => b.classIndex)));
  const gold = images.flatMap((im) =>
    im.boxes.map((b) => ({ frame_id: im.id, class_id: b.classIndex, bbox: [...b.bbox] as Box })),
  );
  const predictions = images.flatMap((im, i) =>
    (detections[i] ?? [])
      .filter((d) => classes.has(d.classIndex))
      .map((d) => ({ frame_id: im.id, class_id: d.classIndex, conf: d.score, bbox: d.box })),
  );
  const evaluation = evaluateCoco(cocoInputOf(images, gold, predictions), 'bbox');
  const ap50ByClass: Record<string, number> = {};
  for (const c of evaluation.perCategory) if (c.ap50 >= 0) ap50ByClass[String(c.categoryId)] = c.ap50;
  const values = Object.values(ap50ByClass);
  return { map50: values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0, ap50ByClass };
}

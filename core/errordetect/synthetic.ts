import type { Box } from '../geometry/boxes';
import type { ErrorDetectionFrame, LabelledObject, ModelPrediction } from './detect';
import { seededRandom, type SeededRandom } from '../random';

/**
 * A seeded synthetic driving set for measuring label-error detection: clean labels, and a
 * detector's predictions on the same scenes that behave like a real one's. 1920×1080 frames of
 * 4–12 objects (a quarter placed beside the previous one, partly overlapping it, as parked cars and
 * crowds are). The detector knows eight classes and not two (cones and barriers); on an object it
 * knows it:
 *
 * - misses it MISS_RATE of the time;
 * - boxes it with each edge off by up to BOX_JITTER of the box's size (IoU about 0.85), or by up to
 *   SLOPPY_BOX_JITTER for SLOPPY_BOX_RATE of objects;
 * - scores classes with independent sigmoids, like YOLOX: the true class 0.55–0.95, the others
 *   under 0.03, except that AMBIGUOUS_RATE of objects also give a confusable class (car↔truck,
 *   truck↔bus, pedestrian↔bicyclist, bicyclist↔motorcycle) 0.1–0.5, and CONFUSED_RATE of them give
 *   the confusable class the high score (the model itself is wrong); conf is objectness (0.8–1)
 *   times the top class score.
 *
 * On a cone or barrier it fires UNKNOWN_DETECT_RATE of the time, as a random known class at conf
 * 0.1–0.4; and each frame has 0–1 false positives anywhere, at conf 0.05–0.7.
 */
export interface SyntheticClass {
  class_id: number;
  name: string;
  /** Share of all objects. */
  share: number;
  /** Box width range in pixels, and height as a multiple of width. */
  width: readonly [number, number];
  aspect: readonly [number, number];
  /** Classes the model mistakes it for; null when the model does not know the class. */
  confusable: readonly number[] | null;
}

export const SYNTHETIC_CLASSES: readonly SyntheticClass[] = [
  { class_id: 1, name: 'pedestrian', share: 0.2, width: [15, 110], aspect: [1.8, 3], confusable: [2] },
  { class_id: 2, name: 'bicyclist', share: 0.07, width: [30, 150], aspect: [1.2, 1.8], confusable: [1, 4] },
  { class_id: 3, name: 'car', share: 0.33, width: [40, 420], aspect: [0.5, 0.85], confusable: [8] },
  { class_id: 4, name: 'motorcycle', share: 0.05, width: [30, 160], aspect: [1, 1.5], confusable: [2] },
  { class_id: 6, name: 'bus', share: 0.04, width: [120, 600], aspect: [0.6, 0.9], confusable: [8] },
  { class_id: 8, name: 'truck', share: 0.1, width: [80, 550], aspect: [0.6, 1], confusable: [3, 6] },
  { class_id: 10, name: 'traffic_light', share: 0.07, width: [8, 40], aspect: [2, 3], confusable: [] },
  { class_id: 13, name: 'stop_sign', share: 0.04, width: [15, 80], aspect: [0.9, 1.1], confusable: [] },
  { class_id: 30, name: 'traffic_cone', share: 0.06, width: [10, 50], aspect: [1.2, 1.8], confusable: null },
  { class_id: 31, name: 'barrier', share: 0.04, width: [40, 300], aspect: [0.3, 0.6], confusable: null },
];

export const FRAME_WIDTH = 1920;
export const FRAME_HEIGHT = 1080;
export const MISS_RATE = 0.05;
export const BOX_JITTER = 0.04;
export const SLOPPY_BOX_RATE = 0.03;
export const SLOPPY_BOX_JITTER = 0.15;
export const AMBIGUOUS_RATE = 0.25;
export const CONFUSED_RATE = 0.03;
export const UNKNOWN_DETECT_RATE = 0.2;
/** Share of objects placed overlapping the previous one. */
export const CROWD_RATE = 0.25;

export interface SyntheticSet {
  frames: ErrorDetectionFrame[];
  /** Classes the detector knows, ascending. */
  model_class_ids: number[];
  /** Classes among the labels that it does not. */
  unknown_class_ids: number[];
}

const known = SYNTHETIC_CLASSES.filter((c) => c.confusable !== null);

function drawClass(rng: SeededRandom): SyntheticClass {
  let u = rng.next();
  for (const c of SYNTHETIC_CLASSES) {
    u -= c.share;
    if (u < 0) return c;
  }
  return SYNTHETIC_CLASSES[SYNTHETIC_CLASSES.length - 1]!;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

function drawBox(cls: SyntheticClass, previous: Box | undefined, rng: SeededRandom): Box {
  // Widths spread log-uniformly: far objects are as common as near ones.
  const w = cls.width[0] * (cls.width[1] / cls.width[0]) ** rng.next();
  const h = Math.min(FRAME_HEIGHT, w * rng.between(cls.aspect[0], cls.aspect[1]));
  let x1 = rng.between(0, FRAME_WIDTH - w);
  let y1 = rng.between(0, FRAME_HEIGHT - h);
  if (previous && rng.next() < CROWD_RATE) {
    const pw = previous[2] - previous[0];
    x1 = previous[0] + (rng.next() < 0.5 ? -1 : 1) * rng.between(0.5, 0.9) * pw;
    y1 = previous[1] + rng.between(-0.1, 0.1) * (previous[3] - previous[1]);
  }
  x1 = clamp(x1, 0, FRAME_WIDTH - w);
  y1 = clamp(y1, 0, FRAME_HEIGHT - h);
  return [x1, y1, x1 + w, y1 + h];
}

function jitterBox(box: Box, share: number, rng: SeededRandom): Box {
  const w = box[2] - box[0];
  const h = box[3] - box[1];
  const x1 = box[0] + rng.between(-share, share) * w;
  const y1 = box[1] + rng.between(-share, share) * h;
  const x2 = Math.max(x1 + 1, box[2] + rng.between(-share, share) * w);
  const y2 = Math.max(y1 + 1, box[3] + rng.between(-share, share) * h);
  return [
    clamp(x1, 0, FRAME_WIDTH),
    clamp(y1, 0, FRAME_HEIGHT),
    clamp(x2, 0, FRAME_WIDTH),
    clamp(y2, 0, FRAME_HEIGHT),
  ];
}

/** Sigmoid class scores: `top` for `classId`, noise for the rest. */
function classScores(classId: number, top: number, rng: SeededRandom): Record<number, number> {
  const probs: Record<number, number> = {};
  for (const c of known) probs[c.class_id] = rng.between(0, 0.03);
  probs[classId] = top;
  return probs;
}

function predictionFrom(
  id: string,
  box: Box,
  probs: Record<number, number>,
  objectness: number,
): ModelPrediction {
  let best = Number.NaN;
  for (const [key, score] of Object.entries(probs))
    if (Number.isNaN(best) || score > probs[best]!) best = Number(key);
  return { prediction_id: id, class_id: best, conf: objectness * probs[best]!, bbox: box, probs };
}

/** The detector's output on one known-class object, or null when it misses it. */
function detectKnown(id: string, cls: SyntheticClass, box: Box, rng: SeededRandom): ModelPrediction | null {
  if (rng.next() < MISS_RATE) return null;
  const sloppy = rng.next() < SLOPPY_BOX_RATE;
  const bbox = jitterBox(box, sloppy ? SLOPPY_BOX_JITTER : BOX_JITTER, rng);
  const probs = classScores(cls.class_id, rng.between(0.55, 0.95), rng);
  const confusable = cls.confusable ?? [];
  const u = rng.next();
  if (confusable.length && u < AMBIGUOUS_RATE) {
    const other = rng.pick(confusable);
    probs[other] = rng.between(0.1, 0.5);
    if (u < CONFUSED_RATE) [probs[other], probs[cls.class_id]] = [probs[cls.class_id]!, probs[other]!];
  }
  return predictionFrom(id, bbox, probs, rng.between(0.8, 1));
}

export function synthesizeErrorDetectionSet(options: { seed: number; frames: number }): SyntheticSet {
  const rng = seededRandom(options.seed);
  const frames: ErrorDetectionFrame[] = [];
  for (let f = 0; f < options.frames; f++) {
    const frameId = `f${String(f).padStart(6, '0')}`;
    const labels: LabelledObject[] = [];
    const predictions: ModelPrediction[] = [];
    const nextPredictionId = () => `${frameId}-p${predictions.length}`;
    const count = rng.integer(4, 12);
    for (let i = 0; i < count; i++) {
      const cls = drawClass(rng);
      const bbox = drawBox(cls, labels[labels.length - 1]?.bbox, rng);
      labels.push({ object_id: `${frameId}-o${i}`, class_id: cls.class_id, bbox });
      if (cls.confusable) {
        const p = detectKnown(nextPredictionId(), cls, bbox, rng);
        if (p) predictions.push(p);
      } else if (rng.next() < UNKNOWN_DETECT_RATE) {
        const guess = rng.pick(known).class_id;
        const box = jitterBox(bbox, BOX_JITTER, rng);
        predictions.push(
          predictionFrom(
            nextPredictionId(),
            box,
            classScores(guess, rng.between(0.15, 0.45), rng),
            rng.between(0.7, 0.9),
          ),
        );
      }
    }
    for (let fp = rng.integer(0, 1); fp > 0; fp--) {
      const cls = rng.pick(known);
      const box = drawBox(cls, undefined, rng);
      predictions.push(
        predictionFrom(
          nextPredictionId(),
          box,
          classScores(cls.class_id, rng.between(0.1, 0.7), rng),
          rng.between(0.5, 1),
        ),
      );
    }
    frames.push({ frame_id: frameId, width: FRAME_WIDTH, height: FRAME_HEIGHT, labels, predictions });
  }
  return {
    frames,
    model_class_ids: known.map((c) => c.class_id).sort((a, b) => a - b),
    unknown_class_ids: SYNTHETIC_CLASSES.filter((c) => c.confusable === null)
      .map((c) => c.class_id)
      .sort((a, b) => a - b),
  };
}

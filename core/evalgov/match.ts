import type { Box } from '../geometry';
import { interpolatedAp, matchFrameClass } from '../quality/match-rule';

/**
 * Matching a run's predictions to gold at one IoU threshold, kept per prediction so that every
 * figure evaluation governance needs — per-class and per-frame true/false positives at an operating
 * confidence, 101-point AP, and AP over any re-weighting of the frames (a bootstrap resample) — is a
 * pass over the same fixed outcomes.
 *
 * The rule is COCO's at a single threshold (and core/quality/gold-measure's): within a frame and a
 * class, predictions in descending confidence each take the unmatched gold box they overlap most,
 * if that IoU reaches `iouThr`. Two consequences used below:
 * - matching never crosses frames, so resampling frames only re-weights each prediction's outcome;
 * - a prediction's outcome depends only on the predictions ranked above it, so the outcomes of the
 *   predictions at or above any confidence are those of that prefix: the counts at an operating
 *   point `confThr` are read from the same matching, no re-match.
 * Every prediction counts (COCO's maxDets cap of 100 per image and class does not apply here; the
 * COCO figures themselves come from core/metrics/coco).
 */

export interface EvalGoldBox {
  frame_id: string;
  class_id: number;
  bbox: Box;
}

export interface EvalPrediction {
  frame_id: string;
  class_id: number;
  conf: number;
  bbox: Box;
}

export interface MatchedClass {
  classId: number;
  /** The class's predictions in descending confidence (ties: frame order, then input order). */
  conf: Float64Array;
  /** 1 where the prediction matched a gold box. */
  tp: Uint8Array;
  /** Frame index (into Matching.frameIds) of each prediction. */
  frame: Uint32Array;
  /** Gold boxes of the class on each frame. */
  goldPerFrame: Uint32Array;
  /** The frames holding the class's gold boxes (sparse goldPerFrame, for resample weights). */
  goldFrames: Uint32Array;
  gold: number;
}

export interface Matching {
  frameIds: readonly string[];
  iouThr: number;
  /** Every class with gold boxes or predictions on the frames, ascending id. */
  classes: MatchedClass[];
}

/** Matches predictions to gold on `frameIds`; boxes on other frames are left out. */
export function matchRun(
  gold: readonly EvalGoldBox[],
  predictions: readonly EvalPrediction[],
  frameIds: readonly string[],
  iouThr: number,
): Matching {
  const n = frameIds.length;
  const frameIndex = new Map(frameIds.map((id, i) => [id, i]));
  const key = (frame: number, cls: number) => `${frame}:${cls}`;
  const goldBy = new Map<string, Box[]>();
  const goldPerFrame = new Map<number, Uint32Array>();
  for (const g of gold) {
    const f = frameIndex.get(g.frame_id);
    if (f === undefined) continue;
    const k = key(f, g.class_id);
    const list = goldBy.get(k);
    if (list) list.push(g.bbox);
    else goldBy.set(k, [g.bbox]);
    let counts = goldPerFrame.get(g.class_id);
    if (!counts) goldPerFrame.set(g.class_id, (counts = new Uint32Array(n)));
    counts[f]!++;
  }
  const predBy = new Map<string, { f: number; cls: number; items: { p: EvalPrediction; order: number }[] }>();
  predictions.forEach((p, order) => {
    const f = frameIndex.get(p.frame_id);
    if (f === undefined) return;
    const k = key(f, p.class_id);
    const entry = predBy.get(k);
    if (entry) entry.items.push({ p, order });
    else predBy.set(k, { f, cls: p.class_id, items: [{ p, order }] });
  });

  const outcomes = new Map<number, { conf: number; tp: number; frame: number; order: number }[]>();
  for (const [k, { f, cls, items }] of predBy) {
    items.sort((a, b) => b.p.conf - a.p.conf || a.order - b.order);
    let list = outcomes.get(cls);
    if (!list) outcomes.set(cls, (list = []));
    const tp = matchFrameClass(
      items.map((it) => it.p),
      goldBy.get(k) ?? [],
      iouThr,
    );
    for (let i = 0; i < items.length; i++) {
      const { p, order } = items[i]!;
      list.push({ conf: p.conf, tp: tp[i]!, frame: f, order });
    }
  }
  const classIds = [...new Set([...goldPerFrame.keys(), ...outcomes.keys()])].sort((a, b) => a - b);
  return {
    frameIds,
    iouThr,
    classes: classIds.map((classId) => {
      const list = (outcomes.get(classId) ?? []).sort(
        (a, b) => b.conf - a.conf || a.frame - b.frame || a.order - b.order,
      );
      const perFrame = goldPerFrame.get(classId) ?? new Uint32Array(n);
      return {
        classId,
        conf: Float64Array.from(list, (o) => o.conf),
        tp: Uint8Array.from(list, (o) => o.tp),
        frame: Uint32Array.from(list, (o) => o.frame),
        goldPerFrame: perFrame,
        goldFrames: Uint32Array.from(perFrame.keys()).filter((f) => perFrame[f]! > 0),
        gold: perFrame.reduce((s, v) => s + v, 0),
      };
    }),
  };
}

export interface Counts {
  gold: number;
  predicted: number;
  tp: number;
  fp: number;
  fn: number;
}

const ratio = (num: number, den: number): number | null => (den > 0 ? num / den : null);

/** Precision and recall of counts; null where nothing divides. */
export const rates = (c: Counts) => ({ precision: ratio(c.tp, c.predicted), recall: ratio(c.tp, c.gold) });

/** Per class, the counts of the predictions with confidence ≥ confThr (0: every prediction). */
export function classCounts(m: Matching, confThr = 0): Array<Counts & { class_id: number }> {
  return m.classes.map((c) => {
    let predicted = 0;
    let tp = 0;
    for (let i = 0; i < c.conf.length && c.conf[i]! >= confThr; i++) {
      predicted++;
      tp += c.tp[i]!;
    }
    return { class_id: c.classId, gold: c.gold, predicted, tp, fp: predicted - tp, fn: c.gold - tp };
  });
}

/** Per frame, every class together, the counts of the predictions with confidence ≥ confThr. */
export function frameCounts(m: Matching, confThr = 0): Counts[] {
  const n = m.frameIds.length;
  const out: Counts[] = Array.from({ length: n }, () => ({ gold: 0, predicted: 0, tp: 0, fp: 0, fn: 0 }));
  for (const c of m.classes) {
    for (let f = 0; f < n; f++) out[f]!.gold += c.goldPerFrame[f]!;
    for (let i = 0; i < c.conf.length && c.conf[i]! >= confThr; i++) {
      const o = out[c.frame[i]!]!;
      o.predicted++;
      o.tp += c.tp[i]!;
    }
  }
  for (const o of out) {
    o.fp = o.predicted - o.tp;
    o.fn = o.gold - o.tp;
  }
  return out;
}

/**
 * F1 of one frame, 2·TP / (2·TP + FP + FN): bounded, and it charges both misses and false alarms.
 * A frame with no gold box and no prediction is 1 (nothing to find and nothing claimed is right).
 */
export function f1Of(c: Counts): number {
  const den = 2 * c.tp + c.fp + c.fn;
  return den > 0 ? (2 * c.tp) / den : 1;
}

/** The per-frame score of the paired significance test: each frame's F1 at confThr. */
export const frameF1 = (m: Matching, confThr: number): number[] => frameCounts(m, confThr).map(f1Of);

/**
 * 101-point interpolated AP (COCO's) of a class under frame weights (all ones: the plain AP), or
 * null when the weighted gold count is 0.
 */
export function weightedAp(c: MatchedClass, weights: ArrayLike<number>): number | null {
  let positives = 0;
  for (let k = 0; k < c.goldFrames.length; k++) {
    const f = c.goldFrames[k]!;
    positives += c.goldPerFrame[f]! * weights[f]!;
  }
  if (positives <= 0) return null;
  const { precision, recall } = scratch(c.tp.length);
  return interpolatedAp(c.tp, (i) => weights[c.frame[i]!]!, positives, precision, recall);
}

/** Buffers reused by weightedAp (one replicate after another: a resample loop calls it thousands of times). */
let scratchPrecision = new Float64Array(256);
let scratchRecall = new Float64Array(256);
function scratch(n: number): { precision: Float64Array; recall: Float64Array } {
  if (scratchPrecision.length < n) {
    const size = Math.max(n, scratchPrecision.length * 2);
    scratchPrecision = new Float64Array(size);
    scratchRecall = new Float64Array(size);
  }
  return { precision: scratchPrecision, recall: scratchRecall };
}

/**
 * Mean AP at the matching's threshold over the classes with gold boxes, under frame weights; a
 * class whose weighted gold count is 0 is left out of the mean. Null when no class is left.
 */
export function weightedMap(m: Matching, weights: ArrayLike<number>): number | null {
  let sum = 0;
  let k = 0;
  for (const c of m.classes) {
    if (c.gold === 0) continue;
    const ap = weightedAp(c, weights);
    if (ap === null) continue;
    sum += ap;
    k++;
  }
  return k ? sum / k : null;
}

/** Frame weights of a bootstrap resample: how many times each frame was drawn. */
export function drawCounts(n: number, indices: ArrayLike<number>, into?: Float64Array): Float64Array {
  const counts = into ?? new Float64Array(n);
  counts.fill(0);
  for (let i = 0; i < indices.length; i++) counts[indices[i]!]!++;
  return counts;
}

import { iou, type Box } from '../geometry';

/**
 * The matching rule and AP shared by the gold measure (core/quality/gold-measure) and evaluation
 * governance (core/evalgov/match): COCO's rule at a single IoU threshold, within one frame and one
 * class, and COCO's 101-point interpolated AP over the outcomes it gives.
 */

/**
 * Greedy matching of one frame's predictions of one class, given in descending confidence: each
 * takes the unmatched gold box it overlaps most, if that IoU reaches `iouThr`. Returns, per
 * prediction, 1 where it matched a gold box (a true positive), 0 otherwise; `taken` (when given: zeroed,
 * of golds.length) is left with 1 on every gold box matched, so a caller can name the ones missed.
 */
export function matchFrameClass(
  predictions: readonly { bbox: Box }[],
  golds: readonly Box[],
  iouThr: number,
  taken: Uint8Array = new Uint8Array(golds.length),
): Uint8Array {
  const tp = new Uint8Array(predictions.length);
  for (let p = 0; p < predictions.length; p++) {
    const box = predictions[p]!.bbox;
    let best = -1;
    let bestIou = iouThr;
    for (let i = 0; i < golds.length; i++) {
      if (taken[i]) continue;
      const v = iou(box, golds[i]!);
      if (v >= bestIou) {
        bestIou = v;
        best = i;
      }
    }
    if (best >= 0) {
      taken[best] = 1;
      tp[p] = 1;
    }
  }
  return tp;
}

/**
 * 101-point interpolated AP (COCO's) from per-prediction outcomes in descending confidence, each
 * prediction weighted by `weight(i)`, over `positives` (> 0) weighted gold boxes. `precision` and
 * `recall` are scratch buffers of at least tp.length (overwritten; a resample loop passes its own).
 */
export function interpolatedAp(
  tp: Uint8Array,
  weight: (i: number) => number,
  positives: number,
  precision: Float64Array = new Float64Array(tp.length),
  recall: Float64Array = new Float64Array(tp.length),
): number {
  const n = tp.length;
  let ctp = 0;
  let cfp = 0;
  for (let i = 0; i < n; i++) {
    const w = weight(i);
    if (tp[i]) ctp += w;
    else cfp += w;
    precision[i] = ctp + cfp > 0 ? ctp / (ctp + cfp) : 0;
    recall[i] = ctp / positives;
  }
  for (let i = n - 2; i >= 0; i--) if (precision[i]! < precision[i + 1]!) precision[i] = precision[i + 1]!;
  let sum = 0;
  let j = 0;
  for (let r = 0; r <= 100; r++) {
    const threshold = r / 100;
    while (j < n && recall[j]! < threshold) j++;
    if (j < n) sum += precision[j]!;
  }
  return sum / 101;
}

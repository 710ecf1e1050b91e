import { munkres } from 'munkres';
import { iou, type Box } from '../geometry/boxes';

/** One frame's labels paired with its predictions, by index into each list. */
export interface FrameMatch {
  /** For each label, the index of its prediction, or -1. */
  predictionOfLabel: Int32Array;
  /** For each label, the IoU with its prediction (0 when unmatched). */
  iouOfLabel: Float64Array;
  /** For each prediction, the index of its label, or -1. */
  labelOfPrediction: Int32Array;
}

/**
 * The optimal one-to-one pairing of labels and predictions by IoU, class-agnostic (Hungarian
 * assignment, `munkres`). Cost is 1 − IoU, and a pair under `minIou` costs 1 as if it did not
 * overlap at all: the assignment then maximises the summed IoU of the pairs it keeps, rather than
 * their number (which would trade one tight pair for two loose ones); pairs under `minIou` are
 * dropped from the result.
 */
export function matchFrame(
  labels: readonly { bbox: Box }[],
  predictions: readonly { bbox: Box }[],
  minIou: number,
): FrameMatch {
  const match: FrameMatch = {
    predictionOfLabel: new Int32Array(labels.length).fill(-1),
    iouOfLabel: new Float64Array(labels.length),
    labelOfPrediction: new Int32Array(predictions.length).fill(-1),
  };
  if (labels.length === 0 || predictions.length === 0) return match;
  const overlaps = labels.map((l) => predictions.map((p) => iou(l.bbox, p.bbox)));
  const cost = overlaps.map((row) => row.map((o) => (o >= minIou ? 1 - o : 1)));
  for (const [l, p] of munkres(cost)) {
    const overlap = overlaps[l]![p]!;
    if (overlap < minIou) continue;
    match.predictionOfLabel[l] = p;
    match.iouOfLabel[l] = overlap;
    match.labelOfPrediction[p] = l;
  }
  return match;
}

import { iou, type Box } from '../geometry';

export interface ClassCandidate {
  className: string;
  /** The best detector score for this class among the detections that match the box. */
  score: number;
  /** Overlap of that detection with the box being classified. */
  iou: number;
}

/**
 * Classifies a drawn box by the detections found around it: each detection overlapping the box by
 * at least `minIou` votes for its class with its score; classes are ranked by their best vote.
 * A detector that finds nothing matching yields no candidates, never a guess.
 */
export function rankBoxClasses(
  box: Box,
  detections: ReadonlyArray<{ box: Box; className: string; score: number }>,
  minIou: number,
): ClassCandidate[] {
  const best = new Map<string, ClassCandidate>();
  for (const d of detections) {
    const overlap = iou(box, d.box);
    if (overlap < minIou) continue;
    const current = best.get(d.className);
    if (!current || d.score > current.score)
      best.set(d.className, { className: d.className, score: d.score, iou: overlap });
  }
  return [...best.values()].sort((a, b) => b.score - a.score || b.iou - a.iou);
}

import { iou, type Box } from '../geometry';

export interface RecallDetection {
  box: Box;
  className: string;
  score: number;
}

/**
 * The detections of the sensitive pass that no object of the frame already covers: a detection
 * overlapping any existing object — whatever its class, state or source, a rejected one included
 * (a person already said no there) — by `matchIou` or more is not a miss. The rest, best first.
 */
export function missedDetections(
  detections: readonly RecallDetection[],
  existing: readonly Box[],
  matchIou: number,
): RecallDetection[] {
  return detections
    .filter((d) => existing.every((box) => iou(d.box, box) < matchIou))
    .sort((a, b) => b.score - a.score);
}

/**
 * How many neighbouring frames back a candidate: frames within `window` of its own that carry
 * an object of its class overlapping its box by `minIou` or more. A miss the detector repeats on
 * the frames around it is more likely an object than noise.
 */
export function temporalSupport(
  candidate: { box: Box; frameIndex: number; className: string },
  neighbours: ReadonlyArray<{ box: Box; frameIndex: number; className: string }>,
  window: number,
  minIou: number,
): number {
  const frames = new Set<number>();
  for (const n of neighbours) {
    const gap = Math.abs(n.frameIndex - candidate.frameIndex);
    if (gap === 0 || gap > window || n.className !== candidate.className) continue;
    if (iou(n.box, candidate.box) >= minIou) frames.add(n.frameIndex);
  }
  return frames.size;
}

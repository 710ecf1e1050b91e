import type { Box } from '../geometry/boxes';

/** A track's object on one frame, as the tracklet rules read it (frame order, one per frame). */
export interface TrackletPoint {
  frame_id: string;
  frame_index: number;
  ts_ms: number;
  object_id: string;
  box: Box;
}

export const centre = (b: Box): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
export const diagonal = (b: Box): number => Math.hypot(b[2] - b[0], b[3] - b[1]);
export const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

export function median(xs: readonly number[]): number {
  if (!xs.length) return 0;
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Points in frame order (ties by object id), so every rule reads them the same way. */
export const inFrameOrder = <P extends { frame_index: number; object_id: string }>(
  points: readonly P[],
): P[] =>
  [...points].sort(
    (a, b) =>
      a.frame_index - b.frame_index || (a.object_id < b.object_id ? -1 : a.object_id > b.object_id ? 1 : 0),
  );

/**
 * The distances unit of every tracklet rule: the track's median box diagonal, so a far small object
 * and a near large one moving alike are judged alike (as the intent rules judge them).
 */
export const scaleOf = (points: readonly { box: Box }[]): number =>
  Math.max(median(points.map((p) => diagonal(p.box))), 1e-9);

/**
 * Axis-aligned boxes in pixels, [x1, y1) to [x2, y2), as [x1, y1, x2, y2]: the shape the database
 * and the API keep (docs/database.md), so a box crosses those edges as it is. Detectors, fusion
 * and the critic carry a box beside what they know of it (`{ box, score, ... }`).
 */
export type Box = [number, number, number, number];

/** A detector's box and its score. */
export interface ScoredBox {
  box: Box;
  score: number;
}

export const boxArea = (b: Box): number => Math.max(0, b[2] - b[0]) * Math.max(0, b[3] - b[1]);

export const intersectionArea = (a: Box, b: Box): number =>
  Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) *
  Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));

export function iou(a: Box, b: Box): number {
  const inter = intersectionArea(a, b);
  const union = boxArea(a) + boxArea(b) - inter;
  return union > 0 ? inter / union : 0;
}

/** Intersection over the smaller box: 1 when one box lies inside the other. */
export function overlapOfSmaller(a: Box, b: Box): number {
  const smaller = Math.min(boxArea(a), boxArea(b));
  return smaller > 0 ? intersectionArea(a, b) / smaller : 0;
}

/** Greedy non-maximum suppression: highest score first, dropping boxes overlapping a kept one. */
export function nms<T extends ScoredBox>(boxes: readonly T[], iouThreshold: number): T[] {
  const sorted = [...boxes].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const b of sorted) if (kept.every((k) => iou(k.box, b.box) <= iouThreshold)) kept.push(b);
  return kept;
}

/** Grows a box by `fraction` of its size on every side, clipped to the image. */
export function expandBox(b: Box, fraction: number, width: number, height: number): Box {
  const [x1, y1, x2, y2] = b;
  const dx = (x2 - x1) * fraction;
  const dy = (y2 - y1) * fraction;
  return [Math.max(0, x1 - dx), Math.max(0, y1 - dy), Math.min(width, x2 + dx), Math.min(height, y2 + dy)];
}

export const scaleBox = (b: Box, sx: number, sy: number): Box => [b[0] * sx, b[1] * sy, b[2] * sx, b[3] * sy];

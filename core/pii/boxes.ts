/** Axis-aligned boxes in pixels, [x1, y1) to [x2, y2), with a detector score. */
export interface ScoredBox {
  x1: number;
  y1: number;
  x2: number;
  y2: number;
  score: number;
}

export type Box = Omit<ScoredBox, 'score'>;

export const boxArea = (b: Box): number => Math.max(0, b.x2 - b.x1) * Math.max(0, b.y2 - b.y1);

export function iou(a: Box, b: Box): number {
  const ix = Math.max(0, Math.min(a.x2, b.x2) - Math.max(a.x1, b.x1));
  const iy = Math.max(0, Math.min(a.y2, b.y2) - Math.max(a.y1, b.y1));
  const inter = ix * iy;
  const union = boxArea(a) + boxArea(b) - inter;
  return union > 0 ? inter / union : 0;
}

/** Greedy non-maximum suppression: highest score first, dropping boxes overlapping a kept one. */
export function nms<T extends ScoredBox>(boxes: readonly T[], iouThreshold: number): T[] {
  const sorted = [...boxes].sort((a, b) => b.score - a.score);
  const kept: T[] = [];
  for (const box of sorted) if (kept.every((k) => iou(k, box) <= iouThreshold)) kept.push(box);
  return kept;
}

/** Grows a box by `fraction` of its size on every side, clipped to the image. */
export function expandBox<T extends Box>(b: T, fraction: number, width: number, height: number): T {
  const dx = (b.x2 - b.x1) * fraction;
  const dy = (b.y2 - b.y1) * fraction;
  return {
    ...b,
    x1: Math.max(0, b.x1 - dx),
    y1: Math.max(0, b.y1 - dy),
    x2: Math.min(width, b.x2 + dx),
    y2: Math.min(height, b.y2 + dy),
  };
}

export function scaleBox<T extends Box>(b: T, sx: number, sy: number): T {
  return { ...b, x1: b.x1 * sx, y1: b.y1 * sy, x2: b.x2 * sx, y2: b.y2 * sy };
}

import type { ScoredBox } from '../geometry';

/**
 * Post-processing of a DB-net text detector (PaddleOCR's det model): the probability map is
 * binarised, 8-connected regions become boxes, a box is kept when the mean probability inside its
 * region reaches `minBoxScore`, and each box is grown ("unclipped") by area·ratio/perimeter, since
 * DB-net is trained on shrunk text kernels.
 */
export interface TextMapOptions {
  binaryThreshold: number;
  minBoxScore: number;
  unclipRatio?: number;
  /** Regions whose shorter side is below this many map pixels are noise. */
  minSide?: number;
}

export function decodeTextMap(
  prob: ArrayLike<number>,
  width: number,
  height: number,
  opts: TextMapOptions,
): ScoredBox[] {
  if (prob.length !== width * height)
    throw new Error(`text map has ${prob.length} values for ${width}×${height}`);
  const unclip = opts.unclipRatio ?? 1.5;
  const minSide = opts.minSide ?? 3;
  const label = new Int32Array(width * height);
  const stack: number[] = [];
  const boxes: ScoredBox[] = [];
  let next = 0;
  for (let start = 0; start < prob.length; start++) {
    if (label[start] || prob[start]! <= opts.binaryThreshold) continue;
    next++;
    label[start] = next;
    stack.push(start);
    let x1 = width,
      y1 = height,
      x2 = -1,
      y2 = -1,
      sum = 0,
      count = 0;
    while (stack.length) {
      const i = stack.pop()!;
      const x = i % width;
      const y = (i - x) / width;
      if (x < x1) x1 = x;
      if (x > x2) x2 = x;
      if (y < y1) y1 = y;
      if (y > y2) y2 = y;
      sum += prob[i]!;
      count++;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= width || (dx === 0 && dy === 0)) continue;
          const j = ny * width + nx;
          if (!label[j] && prob[j]! > opts.binaryThreshold) {
            label[j] = next;
            stack.push(j);
          }
        }
      }
    }
    const w = x2 - x1 + 1;
    const h = y2 - y1 + 1;
    if (Math.min(w, h) < minSide) continue;
    const score = sum / count;
    if (score < opts.minBoxScore) continue;
    const d = (w * h * unclip) / (2 * (w + h));
    boxes.push({
      box: [
        Math.max(0, x1 - d),
        Math.max(0, y1 - d),
        Math.min(width, x2 + 1 + d),
        Math.min(height, y2 + 1 + d),
      ],
      score,
    });
  }
  return boxes;
}

/** DB-net takes sides that are multiples of 32, at most `maxSide` on the longer side. */
export function textInputSize(
  width: number,
  height: number,
  maxSide: number,
): { width: number; height: number } {
  const scale = Math.min(1, maxSide / Math.max(width, height));
  const round = (v: number) => Math.max(32, Math.round((v * scale) / 32) * 32);
  return { width: round(width), height: round(height) };
}

/**
 * Lane polylines, `[[x, y], ...]` in frame pixels, read row by row: a lane runs along the road, so
 * across the image's rows, and every comparison of two lanes is made at the rows they share.
 */

export type Point = [number, number];

/** Why the points cannot be a lane on a `width`×`height` frame, or null: the index and the message. */
export function polylineProblem(
  points: readonly Point[],
  frame: { width: number; height: number },
): { index: number | null; message: string } | null {
  for (const [i, [x, y]] of points.entries())
    if (x < 0 || y < 0 || x > frame.width || y > frame.height)
      return { index: i, message: `outside the ${frame.width}×${frame.height} frame` };
  const [x0, y0] = points[0]!;
  if (points.every(([x, y]) => x === x0 && y === y0))
    return { index: null, message: 'a lane needs at least two distinct points' };
  return null;
}

/** The polyline's lowest and highest row. */
export function rowSpan(points: readonly Point[]): [number, number] {
  const ys = points.map((p) => p[1]);
  return [Math.min(...ys), Math.max(...ys)];
}

/** Where the polyline crosses row `y` (its first segment that does), or null where it does not. */
export function xAtRow(points: readonly Point[], y: number): number | null {
  for (let i = 1; i < points.length; i++) {
    const [xa, ya] = points[i - 1]!;
    const [xb, yb] = points[i]!;
    if (y < Math.min(ya, yb) || y > Math.max(ya, yb)) continue;
    return ya === yb ? (xa + xb) / 2 : xa + ((xb - xa) * (y - ya)) / (yb - ya);
  }
  return null;
}

/**
 * The polyline at every `step`-th pixel row it crosses, top to bottom: the row's index and where
 * the polyline crosses the row's middle (row r spans r..r+1).
 */
export function sampleRows(points: readonly Point[], step = 1): Array<{ row: number; x: number }> {
  const [lo, hi] = rowSpan(points);
  const out: Array<{ row: number; x: number }> = [];
  for (let row = Math.floor(lo); row + 0.5 <= hi; row += step) {
    const x = xAtRow(points, row + 0.5);
    if (x !== null) out.push({ row, x });
  }
  return out;
}

/**
 * The mean horizontal distance of two polylines at `samples` rows spread over the rows both cross;
 * Infinity when they share less than `minOverlap` of the shorter one's rows (they are not the
 * same lane seen twice, whatever their distance).
 */
export function meanRowDistance(
  a: readonly Point[],
  b: readonly Point[],
  samples = 16,
  minOverlap = 0.3,
): number {
  const [aLo, aHi] = rowSpan(a);
  const [bLo, bHi] = rowSpan(b);
  const lo = Math.max(aLo, bLo);
  const hi = Math.min(aHi, bHi);
  const shorter = Math.min(aHi - aLo, bHi - bLo);
  if (hi < lo || (shorter > 0 && (hi - lo) / shorter < minOverlap)) return Infinity;
  let sum = 0;
  let n = 0;
  for (let k = 0; k < samples; k++) {
    const y = samples === 1 ? (lo + hi) / 2 : lo + ((hi - lo) * k) / (samples - 1);
    const xa = xAtRow(a, y);
    const xb = xAtRow(b, y);
    if (xa === null || xb === null) continue;
    sum += Math.abs(xa - xb);
    n++;
  }
  return n === 0 ? Infinity : sum / n;
}

/** A curve x(y) sampled at `n` + 1 evenly spaced rows from `lo` to `hi`, rounded to 0.1 px. */
export function curvePolyline(x: (y: number) => number, lo: number, hi: number, n: number): Point[] {
  const round = (v: number) => Math.round(v * 10) / 10;
  return Array.from({ length: n + 1 }, (_, k): Point => {
    const y = lo + ((hi - lo) * k) / n;
    return [round(x(y)), round(y)];
  });
}

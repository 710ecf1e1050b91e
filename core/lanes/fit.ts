/**
 * Least-squares curves x(y) of degree 1 or 2 (a lane in the image is close to a line, bent a little
 * on a curve). Rows are centred and scaled first so the normal equations stay well conditioned
 * on 4K frames.
 */

export type Curve = (y: number) => number;

/** Solves the 3×3 (or smaller) system `a`·s = `b` by Gaussian elimination with pivoting; null if singular. */
function solve(a: number[][], b: number[]): number[] | null {
  const n = b.length;
  const m = a.map((row, i) => [...row, b[i]!]);
  for (let col = 0; col < n; col++) {
    let pivot = col;
    for (let r = col + 1; r < n; r++) if (Math.abs(m[r]![col]!) > Math.abs(m[pivot]![col]!)) pivot = r;
    if (Math.abs(m[pivot]![col]!) < 1e-12) return null;
    [m[col], m[pivot]] = [m[pivot]!, m[col]!];
    for (let r = 0; r < n; r++) {
      if (r === col) continue;
      const f = m[r]![col]! / m[col]![col]!;
      for (let c = col; c <= n; c++) m[r]![c]! -= f * m[col]![c]!;
    }
  }
  return m.map((row, i) => row[n]! / row[i]!);
}

/** The least-squares x(y) through the points, or null when they do not determine one (too few rows). */
export function fitCurve(points: ReadonlyArray<{ x: number; y: number }>, degree: 1 | 2): Curve | null {
  if (points.length <= degree) return null;
  const mean = points.reduce((s, p) => s + p.y, 0) / points.length;
  const scale = Math.max(1, ...points.map((p) => Math.abs(p.y - mean)));
  const terms = degree + 1;
  const ata = Array.from({ length: terms }, () => new Array<number>(terms).fill(0));
  const atb = new Array<number>(terms).fill(0);
  for (const p of points) {
    const u = (p.y - mean) / scale;
    const basis = degree === 1 ? [1, u] : [1, u, u * u];
    for (let i = 0; i < terms; i++) {
      atb[i]! += basis[i]! * p.x;
      for (let j = 0; j < terms; j++) ata[i]![j]! += basis[i]! * basis[j]!;
    }
  }
  const s = solve(ata, atb);
  if (!s) return null;
  return (y) => {
    const u = (y - mean) / scale;
    return s[0]! + s[1]! * u + (degree === 2 ? s[2]! * u * u : 0);
  };
}

/**
 * A curve fitted, then refitted to the points within `tol` px of it, `rounds` times: the points
 * it keeps and the curve. Points far from the lane (another marking, a stain) drop out.
 */
export function trimmedFit<P extends { x: number; y: number }>(
  points: readonly P[],
  start: Curve,
  tol: number,
  degree: (kept: readonly P[]) => 1 | 2,
  rounds = 3,
): { curve: Curve; kept: P[] } | null {
  const near = (curve: Curve) => points.filter((p) => Math.abs(p.x - curve(p.y)) <= tol);
  let curve = start;
  for (let r = 0; r < rounds; r++) {
    const kept = near(curve);
    const next = fitCurve(kept, degree(kept));
    if (!next) return null;
    curve = next;
  }
  return { curve, kept: near(curve) };
}

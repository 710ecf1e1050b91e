/**
 * Selecting points of a 2-D projection inside a shape (POST /api/explore/select). Boundaries are
 * inclusive for both shapes: a point on a rectangle's side or on a polygon's edge or vertex is
 * inside, so a selection drawn through a point never loses it by rounding to one side.
 */

export interface Rect {
  x_min: number;
  y_min: number;
  x_max: number;
  y_max: number;
}

/** A polygon as its vertices [[x, y], ...] in order (closed implicitly); it may be concave or self-intersecting (even-odd rule). */
export type Polygon = ReadonlyArray<readonly [number, number]>;

export type Shape = { rect: Rect } | { polygon: Polygon };

export const inRect = (x: number, y: number, r: Rect): boolean =>
  x >= Math.min(r.x_min, r.x_max) &&
  x <= Math.max(r.x_min, r.x_max) &&
  y >= Math.min(r.y_min, r.y_max) &&
  y <= Math.max(r.y_min, r.y_max);

/** Whether (x, y) lies on the segment a–b (exactly, up to the products' rounding). */
function onSegment(
  x: number,
  y: number,
  a: readonly [number, number],
  b: readonly [number, number],
): boolean {
  const cross = (b[0] - a[0]) * (y - a[1]) - (b[1] - a[1]) * (x - a[0]);
  const scale = Math.abs(b[0] - a[0]) + Math.abs(b[1] - a[1]);
  if (Math.abs(cross) > 1e-12 * Math.max(1, scale * (Math.abs(x) + Math.abs(y) + scale))) return false;
  return (
    x >= Math.min(a[0], b[0]) &&
    x <= Math.max(a[0], b[0]) &&
    y >= Math.min(a[1], b[1]) &&
    y <= Math.max(a[1], b[1])
  );
}

/** Even-odd rule (ray casting to +x), with points on an edge counted inside. */
export function inPolygon(x: number, y: number, polygon: Polygon): boolean {
  const n = polygon.length;
  if (n < 3) return false;
  let inside = false;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const a = polygon[i]!;
    const b = polygon[j]!;
    if (onSegment(x, y, a, b)) return true;
    // The edge straddles the ray's line (half-open, so a vertex on the line counts once).
    if (a[1] > y !== b[1] > y) {
      const xCross = a[0] + ((y - a[1]) * (b[0] - a[0])) / (b[1] - a[1]);
      if (x < xCross) inside = !inside;
    }
  }
  return inside;
}

export function inShape(x: number, y: number, shape: Shape): boolean {
  return 'rect' in shape ? inRect(x, y, shape.rect) : inPolygon(x, y, shape.polygon);
}

/** The points inside the shape, in their input order. */
export function selectPoints<P extends { x: number; y: number }>(points: readonly P[], shape: Shape): P[] {
  return points.filter((p) => inShape(p.x, p.y, shape));
}

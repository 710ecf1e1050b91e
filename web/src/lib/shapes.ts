import type { Box } from './painter';

/** A point in frame pixels. */
export type Point = [number, number];

/**
 * An object's editable geometry as the API stores it (docs/annotations.md, Geometry): `rbox` is
 * the box before rotation when `rot_deg ≠ 0`; masks and polylines are flat rings [x, y, x, y, …];
 * keypoints are `{name: [x, y] | [x, y, v]}`.
 */
export interface Shape {
  bbox: Box;
  rbox: Box | null;
  rot_deg: number;
  mask: number[][] | null;
  polyline: number[][] | null;
  keypoints: Record<string, number[]> | null;
}

/** What an object is drawn and edited as: the richest shape it has. */
export type ShapeKind = 'polygon' | 'polyline' | 'keypoints' | 'box';

export function kindOf(s: Pick<Shape, 'mask' | 'polyline' | 'keypoints'>): ShapeKind {
  if (s.mask?.length) return 'polygon';
  if (s.polyline?.length) return 'polyline';
  if (s.keypoints && Object.keys(s.keypoints).length) return 'keypoints';
  return 'box';
}

/** A part of a shape under the pointer, which a drag moves. */
export type Handle =
  | { kind: 'corner'; index: number }
  | { kind: 'rotate' }
  | { kind: 'vertex'; part: 'mask' | 'polyline'; ring: number; index: number }
  | { kind: 'edge'; part: 'mask' | 'polyline'; ring: number; index: number; at: Point }
  | { kind: 'keypoint'; name: string }
  | { kind: 'body' };

const rad = (deg: number) => (deg * Math.PI) / 180;

function rotate([x, y]: Point, [cx, cy]: Point, deg: number): Point {
  const a = rad(deg);
  const [cos, sin] = [Math.cos(a), Math.sin(a)];
  return [cx + (x - cx) * cos - (y - cy) * sin, cy + (x - cx) * sin + (y - cy) * cos];
}

/** The box a person edits: the box before rotation for a rotated box, else the bbox. */
export const drawnBox = (s: Pick<Shape, 'bbox' | 'rbox' | 'rot_deg'>): Box =>
  s.rbox && s.rot_deg ? s.rbox : s.bbox;

const centreOf = ([x1, y1, x2, y2]: Box): Point => [(x1 + x2) / 2, (y1 + y2) / 2];

/** The four corners of the drawn box, rotated, clockwise from the top left. */
export function boxCorners(s: Pick<Shape, 'bbox' | 'rbox' | 'rot_deg'>): Point[] {
  const b = drawnBox(s);
  const c = centreOf(b);
  const corners: Point[] = [
    [b[0], b[1]],
    [b[2], b[1]],
    [b[2], b[3]],
    [b[0], b[3]],
  ];
  return s.rot_deg ? corners.map((p) => rotate(p, c, s.rot_deg)) : corners;
}

/** Where the rotation handle sits: above the top edge's middle, `offset` frame pixels out. */
export function rotationHandle(s: Pick<Shape, 'bbox' | 'rbox' | 'rot_deg'>, offset: number): Point {
  const b = drawnBox(s);
  return rotate([(b[0] + b[2]) / 2, b[1] - offset], centreOf(b), s.rot_deg);
}

/** Points of ring `r` as pairs. */
export function ringPoints(ring: readonly number[]): Point[] {
  const out: Point[] = [];
  for (let i = 0; i + 1 < ring.length; i += 2) out.push([ring[i]!, ring[i + 1]!]);
  return out;
}

const dist2 = (a: Point, b: Point) => (a[0] - b[0]) ** 2 + (a[1] - b[1]) ** 2;

/** The nearest point of segment a–b to p. */
function nearestOnSegment(p: Point, a: Point, b: Point): Point {
  const dx = b[0] - a[0];
  const dy = b[1] - a[1];
  const len = dx * dx + dy * dy;
  const t = len === 0 ? 0 : Math.max(0, Math.min(1, ((p[0] - a[0]) * dx + (p[1] - a[1]) * dy) / len));
  return [a[0] + t * dx, a[1] + t * dy];
}

/** Even–odd test of a point against a polygon. */
export function insidePolygon(p: Point, poly: readonly Point[]): boolean {
  let inside = false;
  for (let i = 0, j = poly.length - 1; i < poly.length; j = i++) {
    const [xi, yi] = poly[i]!;
    const [xj, yj] = poly[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/**
 * The handle of a selected shape under point `p`, `tol` frame pixels around it: vertices and
 * corners before edges, edges before the body. Only the handles of the shape's own kind are live:
 * a polygon is edited by its vertices, a box by its corners and rotation handle.
 */
export function handleAt(s: Shape, p: Point, tol: number): Handle | null {
  const t2 = tol * tol;
  const kind = kindOf(s);
  if (kind === 'box') {
    if (dist2(p, rotationHandle(s, tol * 3)) <= t2) return { kind: 'rotate' };
    const corners = boxCorners(s);
    const i = corners.findIndex((c) => dist2(p, c) <= t2);
    if (i >= 0) return { kind: 'corner', index: i };
    return insidePolygon(p, corners) ? { kind: 'body' } : null;
  }
  if (kind === 'keypoints') {
    for (const [name, kp] of Object.entries(s.keypoints!))
      if (dist2(p, [kp[0]!, kp[1]!]) <= t2) return { kind: 'keypoint', name };
    return insideBox(p, s.bbox, tol) ? { kind: 'body' } : null;
  }
  const part = kind === 'polygon' ? 'mask' : 'polyline';
  const rings = (part === 'mask' ? s.mask : s.polyline)!;
  for (let r = 0; r < rings.length; r++) {
    const pts = ringPoints(rings[r]!);
    const i = pts.findIndex((q) => dist2(p, q) <= t2);
    if (i >= 0) return { kind: 'vertex', part, ring: r, index: i };
  }
  for (let r = 0; r < rings.length; r++) {
    const pts = ringPoints(rings[r]!);
    const segments = part === 'mask' ? pts.length : pts.length - 1;
    for (let i = 0; i < segments; i++) {
      const at = nearestOnSegment(p, pts[i]!, pts[(i + 1) % pts.length]!);
      if (dist2(p, at) <= t2) return { kind: 'edge', part, ring: r, index: i, at };
    }
  }
  if (part === 'mask' && rings.some((ring) => insidePolygon(p, ringPoints(ring)))) return { kind: 'body' };
  return null;
}

const insideBox = (p: Point, [x1, y1, x2, y2]: Box, pad = 0) =>
  p[0] >= x1 - pad && p[0] <= x2 + pad && p[1] >= y1 - pad && p[1] <= y2 + pad;

/** Whether point `p` falls on an object's shape (within `tol` of a line). */
export function hits(s: Shape, p: Point, tol: number): boolean {
  if (!insideBox(p, s.bbox, tol)) return false;
  const kind = kindOf(s);
  if (kind === 'box') return insidePolygon(p, boxCorners(s)) || handleAt(s, p, tol) !== null;
  return handleAt(s, p, tol) !== null || kind === 'keypoints';
}

/**
 * The object a click at `p` picks: among those it hits, the smallest by box area, so a small
 * object drawn over a large one can always be reached.
 */
export function pickAt<T extends Shape & { id: string }>(
  objects: readonly T[],
  p: Point,
  tol: number,
): T | null {
  let best: T | null = null;
  let bestArea = Infinity;
  for (const o of objects) {
    if (!hits(o, p, tol)) continue;
    const area = (o.bbox[2] - o.bbox[0]) * (o.bbox[3] - o.bbox[1]);
    if (area < bestArea) [best, bestArea] = [o, area];
  }
  return best;
}

const translateRing = (ring: readonly number[], dx: number, dy: number) =>
  ring.map((v, i) => v + (i % 2 === 0 ? dx : dy));

const translateBox = ([x1, y1, x2, y2]: Box, dx: number, dy: number): Box => [
  x1 + dx,
  y1 + dy,
  x2 + dx,
  y2 + dy,
];

/** The shape with every part moved by (dx, dy). */
export function translate(s: Shape, dx: number, dy: number): Shape {
  return {
    ...s,
    bbox: translateBox(s.bbox, dx, dy),
    rbox: s.rbox ? translateBox(s.rbox, dx, dy) : null,
    mask: s.mask?.map((r) => translateRing(r, dx, dy)) ?? null,
    polyline: s.polyline?.map((r) => translateRing(r, dx, dy)) ?? null,
    keypoints: s.keypoints
      ? Object.fromEntries(
          Object.entries(s.keypoints).map(([k, v]) => [k, [v[0]! + dx, v[1]! + dy, ...v.slice(2)]]),
        )
      : null,
  };
}

/** The axis-aligned box around flat coordinate lists. */
export function enclosing(rings: ReadonlyArray<readonly number[]>): Box {
  let [x1, y1, x2, y2] = [Infinity, Infinity, -Infinity, -Infinity];
  for (const ring of rings)
    for (let i = 0; i + 1 < ring.length; i += 2) {
      x1 = Math.min(x1, ring[i]!);
      x2 = Math.max(x2, ring[i]!);
      y1 = Math.min(y1, ring[i + 1]!);
      y2 = Math.max(y2, ring[i + 1]!);
    }
  return [x1, y1, x2, y2];
}

/** The box around keypoints, `pad` pixels out, so a single point still has an area. */
export const keypointBox = (kps: Record<string, number[]>, pad = 4): Box => {
  const [x1, y1, x2, y2] = enclosing(Object.values(kps).map((v) => [v[0]!, v[1]!]));
  return [x1 - pad, y1 - pad, x2 + pad, y2 + pad];
};

/** Folds degrees into (−180, 180], as the API stores them. */
export function foldDegrees(deg: number): number {
  const r = ((((deg + 180) % 360) + 360) % 360) - 180;
  return r === -180 ? 180 : r;
}

/** Turns a box shape by `deg` clockwise about its centre (the box before rotation stays). */
export function rotateBy(s: Shape, deg: number): Shape {
  const rot = foldDegrees(s.rot_deg + deg);
  const drawn = drawnBox(s);
  return withRotation({ ...s, rbox: drawn }, drawn, rot);
}

/** A box shape with its drawn box and rotation set, bbox the enclosure of the rotated corners. */
function withRotation(s: Shape, drawn: Box, rot: number): Shape {
  if (!rot) return { ...s, bbox: normalBox(drawn), rbox: null, rot_deg: 0 };
  const b = normalBox(drawn);
  const corners = boxCorners({ bbox: b, rbox: b, rot_deg: rot });
  return { ...s, rbox: b, rot_deg: rot, bbox: enclosing([corners.flat()]) };
}

const normalBox = ([x1, y1, x2, y2]: Box): Box => [
  Math.min(x1, x2),
  Math.min(y1, y2),
  Math.max(x1, x2),
  Math.max(y1, y2),
];

function replaceRingPoint(rings: number[][], ring: number, index: number, p: Point): number[][] {
  return rings.map((r, k) =>
    k === ring ? r.map((v, i) => (i === index * 2 ? p[0] : i === index * 2 + 1 ? p[1] : v)) : r,
  );
}

/**
 * The shape after dragging `handle` from `from` to `to` (frame pixels). A corner resizes the
 * drawn box with the opposite corner fixed, in the box's own rotated axes; the rotation handle
 * turns it about its centre; a vertex or keypoint moves alone; the body moves everything.
 */
export function drag(s: Shape, handle: Handle, from: Point, to: Point): Shape {
  const [dx, dy] = [to[0] - from[0], to[1] - from[1]];
  switch (handle.kind) {
    case 'body':
    case 'edge':
      return translate(s, dx, dy);
    case 'rotate': {
      const c = centreOf(drawnBox(s));
      const deg = (Math.atan2(to[1] - c[1], to[0] - c[0]) * 180) / Math.PI + 90;
      return withRotation(s, drawnBox(s), Math.round(foldDegrees(deg) * 10) / 10);
    }
    case 'corner': {
      const corners = boxCorners(s);
      const fixed = corners[(handle.index + 2) % 4]!;
      // In the box's own axes the fixed corner and the dragged point span the new box.
      const local = rotate(to, fixed, -s.rot_deg);
      const drawn = normalBox([fixed[0], fixed[1], local[0], local[1]]);
      const centreLocal = centreOf(drawn);
      const centre = rotate(centreLocal, fixed, s.rot_deg);
      const [w, h] = [drawn[2] - drawn[0], drawn[3] - drawn[1]];
      const box: Box = [centre[0] - w / 2, centre[1] - h / 2, centre[0] + w / 2, centre[1] + h / 2];
      return withRotation(s, box, s.rot_deg);
    }
    case 'vertex': {
      const rings = (handle.part === 'mask' ? s.mask : s.polyline)!;
      const moved = replaceRingPoint(rings, handle.ring, handle.index, to);
      return withRings(s, handle.part, moved);
    }
    case 'keypoint': {
      const kp = s.keypoints![handle.name]!;
      const keypoints = { ...s.keypoints, [handle.name]: [to[0], to[1], ...kp.slice(2)] };
      return { ...s, keypoints, bbox: keypointBox(keypoints) };
    }
  }
}

function withRings(s: Shape, part: 'mask' | 'polyline', rings: number[][]): Shape {
  return { ...s, [part]: rings, bbox: enclosing(rings) };
}

/** A new vertex after vertex `index` of a ring, at `p` (on the edge a double-click named). */
export function insertVertex(
  s: Shape,
  part: 'mask' | 'polyline',
  ring: number,
  index: number,
  p: Point,
): Shape {
  const rings = (part === 'mask' ? s.mask : s.polyline)!.map((r, k) =>
    k === ring ? [...r.slice(0, (index + 1) * 2), p[0], p[1], ...r.slice((index + 1) * 2)] : r,
  );
  return withRings(s, part, rings);
}

/**
 * The shape without vertex `index` of a ring, or null when the ring would be too small to keep
 * (a polygon needs three points, a polyline two): the API would refuse it.
 */
export function removeVertex(s: Shape, part: 'mask' | 'polyline', ring: number, index: number): Shape | null {
  const rings = (part === 'mask' ? s.mask : s.polyline)!;
  const least = part === 'mask' ? 3 : 2;
  if (rings[ring]!.length / 2 - 1 < least) return null;
  const next = rings.map((r, k) => (k === ring ? [...r.slice(0, index * 2), ...r.slice(index * 2 + 2)] : r));
  return withRings(s, part, next);
}

/** Rounds coordinates to tenths of a pixel, the precision a drag means. */
export const roundTenth = (v: number) => Math.round(v * 10) / 10;

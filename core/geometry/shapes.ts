import { InputError } from '../errors';
import type { Box } from './boxes';

/**
 * Geometry of annotation objects, in frame pixels. A box is [x1, y1, x2, y2] (docs/database.md);
 * rings and polylines are flat [x, y, x, y, ...] arrays. Clipping rules (docs/annotations.md):
 * - a box is clipped to the frame; one left with no area (wholly outside, or degenerate) is refused;
 * - a rotated box keeps its own extent (a clipped rotated box is no longer a box); its enclosing
 *   axis-aligned box is what gets clipped, and it must overlap the frame;
 * - a mask ring is clipped to the frame with Sutherland–Hodgman; a ring left with fewer than three
 *   points is dropped, and a mask with no ring left is refused;
 * - polyline vertices are clamped into the frame (a polyline is a path, not an area);
 * - keypoints must lie inside the frame.
 */

export interface FrameSize {
  width: number;
  height: number;
}

const fail = (field: string, message: string): never => {
  throw new InputError(`${field}: ${message}`, [{ field, message }]);
};

function requireFinite(values: readonly number[], field: string): void {
  values.forEach((v, i) => {
    if (!Number.isFinite(v)) fail(`${field}.${i}`, 'must be a finite number');
  });
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** A box checked for order and finiteness, clipped to the frame; refused when nothing is left. */
export function clipBox(
  box: readonly number[],
  frame: FrameSize,
  field = 'body.bbox',
): { box: Box; clipped: boolean } {
  if (box.length !== 4) fail(field, 'must be [x1, y1, x2, y2]');
  requireFinite(box, field);
  const [x1, y1, x2, y2] = box as Box;
  if (!(x2 > x1 && y2 > y1)) fail(field, 'needs x2 > x1 and y2 > y1');
  const out: Box = [
    clamp(x1, 0, frame.width),
    clamp(y1, 0, frame.height),
    clamp(x2, 0, frame.width),
    clamp(y2, 0, frame.height),
  ];
  if (!(out[2] > out[0] && out[3] > out[1]))
    fail(field, `lies outside the ${frame.width}x${frame.height} frame`);
  return { box: out, clipped: out.some((v, i) => v !== box[i]) };
}

/** Corners of a box turned by `rotDeg` clockwise (image axes: y points down) about its centre. */
export function rotatedCorners(box: Box, rotDeg: number): number[] {
  const cx = (box[0] + box[2]) / 2;
  const cy = (box[1] + box[3]) / 2;
  const t = (rotDeg * Math.PI) / 180;
  const cos = Math.cos(t);
  const sin = Math.sin(t);
  const corners = [
    [box[0], box[1]],
    [box[2], box[1]],
    [box[2], box[3]],
    [box[0], box[3]],
  ];
  return corners.flatMap(([x, y]) => {
    const dx = x! - cx;
    const dy = y! - cy;
    return [cx + dx * cos - dy * sin, cy + dx * sin + dy * cos];
  });
}

/** Axis-aligned box enclosing flat [x, y, ...] points. */
export function enclosingBox(points: readonly number[]): Box {
  let x1 = Infinity;
  let y1 = Infinity;
  let x2 = -Infinity;
  let y2 = -Infinity;
  for (let i = 0; i + 1 < points.length; i += 2) {
    x1 = Math.min(x1, points[i]!);
    x2 = Math.max(x2, points[i]!);
    y1 = Math.min(y1, points[i + 1]!);
    y2 = Math.max(y2, points[i + 1]!);
  }
  return [x1, y1, x2, y2];
}

function checkRing(ring: readonly number[], field: string, minPoints: number): void {
  requireFinite(ring, field);
  if (ring.length % 2 !== 0) fail(field, 'needs an even count of numbers (x, y pairs)');
  if (ring.length / 2 < minPoints) fail(field, `needs at least ${minPoints} points`);
}

type Pt = [number, number];

/** Sutherland–Hodgman clip of one polygon against the frame rectangle. */
export function clipRingToFrame(ring: readonly number[], frame: FrameSize): number[] {
  let pts: Pt[] = [];
  for (let i = 0; i + 1 < ring.length; i += 2) pts.push([ring[i]!, ring[i + 1]!]);
  const edges: Array<{ inside: (p: Pt) => boolean; cut: (a: Pt, b: Pt) => Pt }> = [
    { inside: (p) => p[0] >= 0, cut: (a, b) => [0, a[1] + ((b[1] - a[1]) * (0 - a[0])) / (b[0] - a[0])] },
    {
      inside: (p) => p[0] <= frame.width,
      cut: (a, b) => [frame.width, a[1] + ((b[1] - a[1]) * (frame.width - a[0])) / (b[0] - a[0])],
    },
    { inside: (p) => p[1] >= 0, cut: (a, b) => [a[0] + ((b[0] - a[0]) * (0 - a[1])) / (b[1] - a[1]), 0] },
    {
      inside: (p) => p[1] <= frame.height,
      cut: (a, b) => [a[0] + ((b[0] - a[0]) * (frame.height - a[1])) / (b[1] - a[1]), frame.height],
    },
  ];
  for (const edge of edges) {
    const input = pts;
    pts = [];
    for (let i = 0; i < input.length; i++) {
      const cur = input[i]!;
      const prev = input[(i + input.length - 1) % input.length]!;
      if (edge.inside(cur)) {
        if (!edge.inside(prev)) pts.push(edge.cut(prev, cur));
        pts.push(cur);
      } else if (edge.inside(prev)) {
        pts.push(edge.cut(prev, cur));
      }
    }
    if (pts.length === 0) break;
  }
  return pts.flat();
}

/** Twice the signed area; zero for a ring that encloses nothing. */
const ringArea2 = (ring: readonly number[]): number => {
  let a = 0;
  const n = ring.length / 2;
  for (let i = 0; i < n; i++) {
    const j = (i + 1) % n;
    a += ring[2 * i]! * ring[2 * j + 1]! - ring[2 * j]! * ring[2 * i + 1]!;
  }
  return a;
};

/** Mask rings checked (≥ 3 points, finite) and clipped to the frame. */
export function clipMask(
  rings: readonly (readonly number[])[],
  frame: FrameSize,
  field = 'body.mask_polygons',
): { rings: number[][]; clipped: boolean } {
  if (rings.length === 0) fail(field, 'needs at least one ring');
  rings.forEach((ring, i) => checkRing(ring, `${field}.${i}`, 3));
  const out = rings.map((r) => clipRingToFrame(r, frame)).filter((r) => r.length >= 6 && ringArea2(r) !== 0);
  if (out.length === 0) fail(field, `no ring keeps an area inside the ${frame.width}x${frame.height} frame`);
  const clipped =
    out.length !== rings.length ||
    out.some((r, i) => r.length !== rings[i]!.length || r.some((v, k) => v !== rings[i]![k]));
  return { rings: out, clipped };
}

/** Polylines checked (≥ 2 points, finite), vertices clamped into the frame. */
export function clampPolylines(
  lines: readonly (readonly number[])[],
  frame: FrameSize,
  field = 'body.polyline',
): { lines: number[][]; clipped: boolean } {
  if (lines.length === 0) fail(field, 'needs at least one line');
  lines.forEach((line, i) => checkRing(line, `${field}.${i}`, 2));
  let clipped = false;
  const out = lines.map((line) =>
    line.map((v, k) => {
      const c = clamp(v, 0, k % 2 === 0 ? frame.width : frame.height);
      if (c !== v) clipped = true;
      return c;
    }),
  );
  return { lines: out, clipped };
}

/** Keypoints `{name: [x, y] | [x, y, v]}` must lie inside the frame. */
export function checkKeypoints(
  points: Readonly<Record<string, readonly number[]>>,
  frame: FrameSize,
  field = 'body.keypoints',
): void {
  for (const [name, p] of Object.entries(points)) {
    requireFinite(p, `${field}.${name}`);
    const [x, y] = p as [number, number];
    if (x < 0 || y < 0 || x > frame.width || y > frame.height)
      fail(`${field}.${name}`, `lies outside the ${frame.width}x${frame.height} frame`);
  }
}

/** Union of boxes. */
export function unionBox(boxes: readonly Box[]): Box {
  return [
    Math.min(...boxes.map((b) => b[0])),
    Math.min(...boxes.map((b) => b[1])),
    Math.max(...boxes.map((b) => b[2])),
    Math.max(...boxes.map((b) => b[3])),
  ];
}

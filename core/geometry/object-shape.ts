import { InputError } from '../errors';
import type { Box } from './boxes';
import {
  checkKeypoints,
  clampPolylines,
  clipBox,
  clipMask,
  enclosingBox,
  rotatedCorners,
  unionBox,
  type FrameSize,
} from './shapes';

/** The shapes a client sends for one object (CreateObjectIn's geometry fields). */
export interface ShapeIn {
  bbox: readonly number[];
  rot_deg: number;
  mask_polygons?: readonly (readonly number[])[] | null;
  polyline?: readonly (readonly number[])[] | null;
  keypoints?: Readonly<Record<string, readonly number[]>> | null;
}

/** The shapes as stored: bbox always encloses every other shape of the object. */
export interface ShapeOut {
  bbox: Box;
  /** The rotated box before rotation, or null for an axis-aligned box. */
  rbox: Box | null;
  rotDeg: number;
  mask: number[][] | null;
  polyline: number[][] | null;
  /** True when anything was clipped or clamped to the frame. */
  clipped: boolean;
}

/** Degrees folded into (-180, 180]. */
export function normaliseDegrees(deg: number): number {
  if (!Number.isFinite(deg))
    throw new InputError('rot_deg must be a finite number', [
      { field: 'body.rot_deg', message: 'must be finite' },
    ]);
  const r = ((((deg + 180) % 360) + 360) % 360) - 180;
  return r === -180 ? 180 : r;
}

/**
 * Validates and normalises an object's geometry against its frame (rules in ./shapes.ts). With a
 * rotation, `bbox` is read as the box before rotation (what an editor draws) and kept as `rbox`;
 * the stored `bbox` is then the enclosing axis-aligned box, as the spec says. The stored bbox is
 * the given (clipped) box grown to enclose the mask, polylines and keypoints.
 */
export function normaliseShape(input: ShapeIn, frame: FrameSize): ShapeOut {
  const rotDeg = normaliseDegrees(input.rot_deg);
  // With a rotation the box itself is not clipped (a clipped rotated box is no box); its enclosure is.
  const rbox: Box | null =
    rotDeg !== 0 ? clipBox(input.bbox, { width: Infinity, height: Infinity }).box : null;
  const { box: bbox, clipped: boxClipped } = clipBox(
    rbox ? enclosingBox(rotatedCorners(rbox, rotDeg)) : input.bbox,
    frame,
  );
  let clipped = boxClipped;
  const grown: Box[] = [bbox];
  let mask: number[][] | null = null;
  if (input.mask_polygons) {
    const m = clipMask(input.mask_polygons, frame);
    mask = m.rings;
    clipped ||= m.clipped;
    grown.push(enclosingBox(m.rings.flat()));
  }
  let polyline: number[][] | null = null;
  if (input.polyline) {
    const p = clampPolylines(input.polyline, frame);
    polyline = p.lines;
    clipped ||= p.clipped;
    grown.push(enclosingBox(p.lines.flat()));
  }
  if (input.keypoints && Object.keys(input.keypoints).length > 0) {
    checkKeypoints(input.keypoints, frame);
    grown.push(enclosingBox(Object.values(input.keypoints).flatMap((p) => [p[0]!, p[1]!])));
  }
  return { bbox: unionBox(grown), rbox, rotDeg, mask, polyline, clipped };
}

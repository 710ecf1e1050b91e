import { isDeepStrictEqual } from 'node:util';
import { normaliseShape, type Box, type FrameSize } from '../geometry';

/**
 * Geometry an edit of an existing object may carry (the review route's `edit` action). A field left
 * out keeps what the object has; `polyline: null` and `keypoints: null` remove that shape.
 */
export interface ShapeEdit {
  /** With a rotation, the box before rotation (as on create). */
  bbox?: readonly number[];
  rot_deg?: number;
  polyline?: readonly (readonly number[])[] | null;
  keypoints?: Readonly<Record<string, readonly number[]>> | null;
}

/** An object's stored geometry, in the column names a review snapshot uses. */
export interface StoredShape {
  bbox: Box;
  /** The box before rotation, or null for an axis-aligned box. */
  rbox: Box | null;
  rot_deg: number;
  polyline: number[][] | null;
  keypoints: Record<string, number[]> | null;
}

export const STORED_SHAPE_FIELDS = ['bbox', 'rbox', 'rot_deg', 'polyline', 'keypoints'] as const;
export type StoredShapeField = (typeof STORED_SHAPE_FIELDS)[number];

export const SHAPE_EDIT_FIELDS = ['bbox', 'rot_deg', 'polyline', 'keypoints'] as const;

/** The edit fields a request actually carries (an absent field is undefined, not null). */
export function shapeEditFields(edit: ShapeEdit): Array<(typeof SHAPE_EDIT_FIELDS)[number]> {
  return SHAPE_EDIT_FIELDS.filter((f) => edit[f] !== undefined);
}

export interface EditedShape {
  shape: StoredShape;
  /** True when anything was clipped or clamped to the frame. */
  clipped: boolean;
  /** Stored fields whose value differs from before, for the audit trail. */
  changed: StoredShapeField[];
}

const copyPoints = (points: Readonly<Record<string, readonly number[]>>): Record<string, number[]> =>
  Object.fromEntries(Object.entries(points).map(([k, p]) => [k, [...p]]));

/**
 * Applies an edit to an object's geometry and normalises the result against its frame exactly as
 * a create does (normaliseShape). Without a new `bbox` the edit starts from the box the object was
 * drawn as: its box before rotation (rbox), or its bbox when axis-aligned; without `rot_deg` it
 * keeps the object's rotation. The mask is not edited here (it lives in its own blob and has its
 * own route) but the stored bbox must still enclose it, so its rings are passed in. A stored
 * axis-aligned bbox already encloses the old shapes, so removing a polyline or keypoints does not
 * shrink it: the editor sends the new box when it wants a smaller one.
 */
export function applyShapeEdit(
  current: StoredShape,
  edit: ShapeEdit,
  mask: readonly (readonly number[])[] | null,
  frame: FrameSize,
): EditedShape {
  const polyline = edit.polyline === undefined ? current.polyline : edit.polyline;
  const keypoints = edit.keypoints === undefined ? current.keypoints : edit.keypoints;
  const out = normaliseShape(
    {
      bbox: edit.bbox ?? current.rbox ?? current.bbox,
      rot_deg: edit.rot_deg ?? current.rot_deg,
      mask_polygons: mask,
      polyline,
      keypoints,
    },
    frame,
  );
  const shape: StoredShape = {
    bbox: out.bbox,
    rbox: out.rbox,
    rot_deg: out.rotDeg,
    polyline: out.polyline,
    keypoints: keypoints ? copyPoints(keypoints) : null,
  };
  const changed = STORED_SHAPE_FIELDS.filter((f) => !isDeepStrictEqual(current[f], shape[f]));
  return { shape, clipped: out.clipped, changed };
}

import { type Box, iou } from '../geometry/boxes';
import { enclosingBox } from '../geometry/shapes';

/**
 * Mask/box consistency along a track (`GET /api/tracks/{id}/seg4d-consistency`, docs/tracks.md):
 * on each frame, does the object's mask fill the box it is labelled with, and from one masked
 * frame to the next, does the mask's area change no more than an object's apparent size can?
 */

export interface Seg4dThresholds {
  /** Least IoU between a mask's enclosing box and the object's box. */
  minBoxIou: number;
  /** Largest factor by which the mask's area may grow or shrink per frame between masked frames. */
  maxAreaRatio: number;
}

export const DEFAULT_SEG4D_THRESHOLDS: Seg4dThresholds = { minBoxIou: 0.7, maxAreaRatio: 2 };

/** One object of the track, in frame order; `polygons` is null for an object without a mask. */
export interface Seg4dObject {
  objectId: string;
  frameId: string;
  frameIndex: number;
  box: Box;
  polygons: number[][] | null;
}

export type Seg4dFlag = 'mask_box_mismatch' | 'area_jump' | 'mask_missing' | 'empty_mask';

export interface Seg4dFrame {
  object_id: string;
  frame_id: string;
  frame_index: number;
  has_mask: boolean;
  mask_area: number | null;
  mask_box: Box | null;
  box_iou: number | null;
  /** The mask's area over the previous masked frame's, per frame between them. */
  area_ratio: number | null;
  flags: Seg4dFlag[];
}

/** Area of flat [x, y, ...] rings by the shoelace formula, summed (rings are outlines, not holes). */
export function polygonsArea(polygons: readonly number[][]): number {
  let total = 0;
  for (const ring of polygons) {
    let twice = 0;
    const n = Math.floor(ring.length / 2);
    for (let i = 0; i < n; i++) {
      const j = (i + 1) % n;
      twice += ring[2 * i]! * ring[2 * j + 1]! - ring[2 * j]! * ring[2 * i + 1]!;
    }
    total += Math.abs(twice) / 2;
  }
  return total;
}

export function seg4dConsistency(objects: readonly Seg4dObject[], thresholds: Seg4dThresholds) {
  const ordered = [...objects].sort((a, b) => a.frameIndex - b.frameIndex);
  const anyMask = ordered.some((o) => o.polygons !== null);
  let previous: { area: number; frameIndex: number } | null = null;
  const frames: Seg4dFrame[] = ordered.map((o) => {
    const flags: Seg4dFlag[] = [];
    const at = { object_id: o.objectId, frame_id: o.frameId, frame_index: o.frameIndex };
    if (o.polygons === null) {
      // A track with no masks at all is a box track, not an inconsistent one.
      if (anyMask) flags.push('mask_missing');
      return {
        ...at,
        has_mask: false,
        mask_area: null,
        mask_box: null,
        box_iou: null,
        area_ratio: null,
        flags,
      };
    }
    const area = polygonsArea(o.polygons);
    const points = o.polygons.flat();
    const maskBox = points.length >= 2 ? enclosingBox(points) : null;
    const boxIou = maskBox ? iou(maskBox, o.box) : 0;
    if (area <= 0) flags.push('empty_mask');
    else if (boxIou < thresholds.minBoxIou) flags.push('mask_box_mismatch');
    let areaRatio: number | null = null;
    if (previous && previous.area > 0 && area > 0) {
      areaRatio = area / previous.area;
      // A gap of k frames allows k frames' worth of change.
      const allowed = thresholds.maxAreaRatio ** Math.max(1, o.frameIndex - previous.frameIndex);
      if (areaRatio > allowed || areaRatio < 1 / allowed) flags.push('area_jump');
    }
    if (area > 0) previous = { area, frameIndex: o.frameIndex };
    return {
      ...at,
      has_mask: true,
      mask_area: area,
      mask_box: maskBox,
      box_iou: maskBox ? boxIou : null,
      area_ratio: areaRatio,
      flags,
    };
  });
  const masked = frames.filter((f) => f.has_mask);
  const ious = masked.map((f) => f.box_iou).filter((v): v is number => v !== null);
  const flagged = frames.filter((f) => f.flags.length);
  const counts: Record<Seg4dFlag, number> = {
    mask_box_mismatch: 0,
    area_jump: 0,
    mask_missing: 0,
    empty_mask: 0,
  };
  for (const f of flagged) for (const flag of f.flags) counts[flag]++;
  return {
    objects: frames.length,
    masked: masked.length,
    mask_coverage: frames.length ? masked.length / frames.length : 0,
    mean_box_iou: ious.length ? ious.reduce((a, b) => a + b, 0) / ious.length : null,
    min_box_iou: ious.length ? Math.min(...ious) : null,
    consistent: flagged.length === 0,
    flag_counts: counts,
    frames,
  };
}

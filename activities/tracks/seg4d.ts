import { NotFoundError } from '../../core/errors';
import type { Box } from '../../core/geometry/boxes';
import { mapLimit } from '../../core/map-limit';
import { seg4dConsistency, type Seg4dThresholds } from '../../core/tracking/seg4d';
import { createMaskStore } from '../annotations/masks';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';

/** Mask reads in flight at once for one track. */
const MASK_READS = 8;

/** A track's objects with their masks, checked for mask/box consistency (core/tracking/seg4d.ts). */
export async function trackSeg4dConsistency(
  deps: { db: Db; storage: ObjectStore },
  trackId: string,
  thresholds: Seg4dThresholds,
) {
  const track = await deps.db.track.findUnique({
    where: { id: trackId },
    select: {
      id: true,
      sessionId: true,
      objects: {
        select: { id: true, bbox: true, maskUri: true, frame: { select: { id: true, index: true } } },
      },
    },
  });
  if (!track) throw new NotFoundError(`no track ${trackId}`);
  const masks = createMaskStore(deps.storage);
  const objects = await mapLimit(track.objects, MASK_READS, async (o) => ({
    objectId: o.id,
    frameId: o.frame.id,
    frameIndex: o.frame.index,
    box: o.bbox as Box,
    polygons: o.maskUri ? (await masks.read(o.maskUri)).polygons : null,
  }));
  return {
    track_id: track.id,
    session_id: track.sessionId,
    thresholds: { min_box_iou: thresholds.minBoxIou, max_area_ratio: thresholds.maxAreaRatio },
    ...seg4dConsistency(objects, thresholds),
  };
}

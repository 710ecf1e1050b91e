import { z } from 'zod';
import { trackSeg4dConsistency } from '../../../activities/tracks/seg4d';
import { DEFAULT_SEG4D_THRESHOLDS } from '../../../core/tracking/seg4d';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** The thresholds of the check (the spec does not show them; docs/tracks.md "Mask/box consistency"). */
export const Seg4dQuery = z.strictObject({
  min_box_iou: z.coerce.number().min(0).max(1).default(DEFAULT_SEG4D_THRESHOLDS.minBoxIou),
  max_area_ratio: z.coerce.number().gt(1).max(100).default(DEFAULT_SEG4D_THRESHOLDS.maxAreaRatio),
});

/** Mask/box consistency along a track (docs/tracks.md). */
export function createTrackSeg4dRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('tracks').get(
    '/api/tracks/{track_id}/seg4d-consistency',
    {
      summary:
        "Mask/box consistency along a track: per object in frame order, its mask's area, the IoU of the mask's enclosing box with the object's box, and the area's change since the previous masked frame; flags a mask that does not fill its box (below min_box_iou), an area that changes by more than max_area_ratio per frame, an empty mask, and a frame without a mask on a masked track",
      access: 'annotator',
      params: uuidParams('track_id'),
      query: Seg4dQuery,
      statuses: { 404: 'no such track' },
    },
    async ({ params, query }) =>
      trackSeg4dConsistency(deps, params.track_id, {
        minBoxIou: query.min_box_iou,
        maxAreaRatio: query.max_area_ratio,
      }),
  );
}

import { createMaskStore } from '../../../activities/annotations/masks';
import { relabelTrack } from '../../../activities/tracks/relabel';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { tellCampaignsOfReview } from '../../http/campaign-signals';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { TrackRelabelIn } from './relabel-validators';

/**
 * Relabelling along a track (docs/track-relabel.md). Reviewer, like bulk review: each move is a
 * relabel verdict of the caller, which an annotator may not give.
 */
export function createTrackRelabelRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  return new RouteGroup('tracks').post(
    '/api/tracks/{track_id}/relabel',
    {
      summary:
        'Relabels every machine object of the track to class_name as one bulk relabel review of the caller (one batch_id; source human, version +1, state accepted). Objects of source human or imported, and machine objects already of the class, are left and listed. A move across l1 groups is refused and nothing is written',
      access: 'reviewer',
      params: uuidParams('track_id'),
      body: { name: 'TrackRelabelIn', schema: TrackRelabelIn },
      statuses: {
        404: 'no such track; an object of the track was deleted while it was relabelled',
        409: 'expected_versions does not match the track’s objects, or an object changed while it was relabelled; nothing relabelled',
        422: 'unknown or retired class_name; an implausible class move (rule same_l1, naming both classes); nothing relabelled',
      },
    },
    async ({ params, body, principal, req }) => {
      const result = await relabelTrack(
        db,
        masks,
        params.track_id,
        { className: body.class_name, expectedVersions: body.expected_versions, reviewer: body.reviewer },
        actorOf(principal, req),
      );
      await tellCampaignsOfReview(
        deps,
        result.relabelled.map((o) => o.object_id),
      );
      return result;
    },
  );
}

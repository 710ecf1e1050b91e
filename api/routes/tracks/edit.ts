import { mergeTracks, smoothTrack, splitTrack } from '../../../activities/tracks/edit';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { TrackMergeIn, TrackSmoothIn, TrackSplitIn } from './edit-validators';

/**
 * Track edits (docs/track-edits.md). Merging deletes a track, so it is the reviewer's, as deleting
 * one is; splitting loses nothing and smoothing moves only machine boxes, so they are the
 * annotator's, as interpolation is.
 */
export function createTrackEditRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const trackParams = uuidParams('track_id');
  return new RouteGroup('tracks')
    .post(
      '/api/tracks/{track_id}/merge',
      {
        summary:
          'Merges other_track_id into this track: its objects join (each version bumped), the trajectories merge in time order, its events move over, this track’s attrs and intent win, switch flags on the join frames are cleared, and the other track is deleted. A frame holding objects of both is refused unless keep says which stays. One transaction, audited',
        access: 'reviewer',
        params: trackParams,
        body: { name: 'TrackMergeIn', schema: TrackMergeIn },
        statuses: {
          404: 'no such track (either of them)',
          422: 'the tracks are one, of different sessions or classes, or share frames and keep is not given',
        },
      },
      async ({ params, body, principal, req }) =>
        mergeTracks(
          db,
          params.track_id,
          { otherTrackId: body.other_track_id, keep: body.keep },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/tracks/{track_id}/split',
      {
        summary:
          'Splits the track at a frame of its session: objects from that frame on (by frame index) move to a new track of the same session and tracker version, with their part of the trajectory and switch flags; events stay with the side holding their start. One transaction, audited',
        access: 'annotator',
        params: trackParams,
        body: { name: 'TrackSplitIn', schema: TrackSplitIn },
        statuses: {
          404: 'no such track or frame',
          422: 'the frame is not of the track’s session, or one side would hold no object',
        },
      },
      async ({ params, body, principal, req }) =>
        splitTrack(db, params.track_id, body.at_frame_id, actorOf(principal, req)),
    )
    .post(
      '/api/tracks/{track_id}/smooth',
      {
        summary:
          'Smooths the box centres and sizes of the track’s machine objects with a centred moving average over window objects (odd, default 5); a person’s boxes and keyframes count as neighbours but never move. Answers each object’s displacement; dry_run writes nothing. Audited',
        access: 'annotator',
        params: trackParams,
        body: { name: 'TrackSmoothIn', schema: TrackSmoothIn },
        statuses: {
          404: 'no such track',
          409: 'an object of the track changed while it was smoothed',
          422: 'the window is not an odd number from 3 to 51',
        },
      },
      async ({ params, body, principal, req }) =>
        smoothTrack(
          db,
          params.track_id,
          { window: body.window, dryRun: body.dry_run },
          actorOf(principal, req),
        ),
    );
}

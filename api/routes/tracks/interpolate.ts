import { interpolateTrack, setKeyframe, trackOfObject } from '../../../activities/tracks/interpolate';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { InterpolateIn, KeyframeIn } from './interpolate-validators';

/**
 * Interpolation along tracks (docs/track-interpolation.md). Annotators may call every route, as
 * they may draw and edit objects: fills are machine objects sent to review, never verdicts, and
 * nothing a person drew is overwritten.
 */
export function createTrackInterpolationRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const trackParams = uuidParams('track_id');
  const objectParams = uuidParams('object_id');
  const filled = {
    404: 'no such track',
    409: 'an object of the track changed while it was interpolated',
  };
  return new RouteGroup('tracks')
    .post(
      '/api/objects/{object_id}/keyframe',
      {
        summary:
          'Marks (keyframe true, the default) or unmarks an object of a track as a keyframe, kept in attrs.keyframe: a person’s anchor that interpolation never overwrites. A change bumps the version. Audited',
        access: 'annotator',
        params: objectParams,
        body: { name: 'KeyframeIn', schema: KeyframeIn },
        statuses: {
          404: 'no such object',
          409: 'expected_version is not the object’s version',
          422: 'the object belongs to no track',
        },
      },
      async ({ params, body, principal, req }) =>
        setKeyframe(
          db,
          params.object_id,
          { keyframe: body.keyframe, expectedVersion: body.expected_version },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/tracks/{track_id}/interpolate',
      {
        summary:
          'Fills the frames between two objects of the track (from_object_id, to_object_id), or every gap between its consecutive objects, with objects of source interpolated in state review: box corners and polyline vertices linear in frame time, the anchors’ class. A frame holding another object of the track is left alone unless that object is itself interpolated (then recomputed, next version). One transaction, audited; answers what each frame got',
        access: 'annotator',
        params: trackParams,
        body: { name: 'InterpolateIn', schema: InterpolateIn },
        statuses: {
          ...filled,
          422: 'an object named is not an anchor of the track; the anchors’ classes differ; their polygons have unmatched vertex counts; nothing lies between them',
        },
      },
      async ({ params, body, principal, req }) =>
        interpolateTrack(
          db,
          params.track_id,
          body.from_object_id && body.to_object_id
            ? { mode: 'between', fromObjectId: body.from_object_id, toObjectId: body.to_object_id }
            : { mode: 'gaps' },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/tracks/{track_id}/interpolate-keyframed',
      {
        summary:
          'Interpolates between consecutive keyframes of the track only: frames without an object of the track are filled, interpolated non-keyframe objects recomputed, every other object left. One transaction, audited; answers what each frame got',
        access: 'annotator',
        params: trackParams,
        statuses: {
          ...filled,
          422: 'the track has fewer than two keyframes; consecutive keyframes differ in class or in polygon vertex counts',
        },
      },
      async ({ params, principal, req }) =>
        interpolateTrack(db, params.track_id, { mode: 'keyframed' }, actorOf(principal, req)),
    )
    .post(
      '/api/objects/{object_id}/reinterpolate',
      {
        summary:
          'After a keyframe moved: recomputes the interpolated objects on both sides of this keyframe, up to the neighbouring keyframes (filling empty frames there too). One transaction, audited; answers what each frame got',
        access: 'annotator',
        params: objectParams,
        statuses: {
          404: 'no such object',
          409: 'an object of the track changed while it was interpolated',
          422: 'the object belongs to no track or is not a keyframe; no other keyframe on either side; classes or polygon vertex counts differ',
        },
      },
      async ({ params, principal, req }) =>
        interpolateTrack(
          db,
          await trackOfObject(db, params.object_id),
          { mode: 'around', keyframeObjectId: params.object_id },
          actorOf(principal, req),
        ),
    );
}

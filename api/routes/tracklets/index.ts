import { z } from 'zod';
import { createMaskStore } from '../../../activities/annotations/masks';
import { propagateObject } from '../../../activities/propagate';
import {
  deriveTrack,
  setTrackAttributes,
  suggestTrackKeyframes,
  trackletCorpusStats,
  trackletSummary,
} from '../../../activities/tracklets';
import { setKeyframe } from '../../../activities/tracks/interpolate';
import { KeyframeThresholds } from '../../../core/tracklets/keyframes';
import { PropagateIn } from '../../../core/tracklets/propagate';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { KeyframeIn } from '../tracks/interpolate-validators';

/** POST /api/tracklets/{track_id}/attributes (the spec shows no body; docs/tracklets.md). */
export const TrackAttributesIn = z.strictObject({
  attrs: z
    .record(z.string().min(1).max(64), z.unknown())
    .refine((a) => Object.keys(a).length >= 1 && Object.keys(a).length <= 32, {
      message: 'between 1 and 32 attributes',
    })
    .meta({
      description: 'the attributes to set on every object of the range (merged into its attrs)',
      minProperties: 1,
      maxProperties: 32,
    }),
  from_frame_id: z
    .uuid()
    .nullable()
    .default(null)
    .meta({ description: 'first frame of the range; null: the track’s first' }),
  to_frame_id: z
    .uuid()
    .nullable()
    .default(null)
    .meta({ description: 'last frame of the range; null: the track’s last' }),
  reviewer: z.string().min(1).max(128).default('anon'),
});

/** POST /api/tracklets/{track_id}/derive. */
export const DeriveIn = z.strictObject({
  dry_run: z.boolean().default(false).meta({ description: 'answer what would be stored, store nothing' }),
});

export const TrackletStatsQuery = z.strictObject({
  session_id: z.uuid().optional().meta({ description: 'only the tracks of this session' }),
});

/**
 * Tracklets (docs/tracklets.md), filed under the spec's `campaigns` group: a track's summary, corpus
 * statistics, keyframe suggestions, attributes over a frame range, derived attributes, and the
 * keyframe and propagate writes of the tracks and objects groups, answered with the tracklet after
 * them. Reads and label edits are the annotator's, as in the tracks group.
 */
export function createTrackletRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  const trackParams = uuidParams('track_id');
  const objectParams = uuidParams('object_id');
  const noTrack = { 404: 'no such track' };
  return new RouteGroup('campaigns')
    .post(
      '/api/tracklets/objects/{object_id}/keyframe',
      {
        summary:
          'Marks or unmarks an object of a track as a keyframe, as POST /api/objects/{object_id}/keyframe does (attrs.keyframe, version bumped, audited), and answers with the tracklet after it',
        access: 'annotator',
        params: objectParams,
        body: { name: 'KeyframeIn', schema: KeyframeIn },
        statuses: {
          404: 'no such object',
          409: 'expected_version is not the object’s version',
          422: 'the object belongs to no track',
        },
      },
      async ({ params, body, principal, req }) => {
        const marked = await setKeyframe(
          db,
          params.object_id,
          { keyframe: body.keyframe, expectedVersion: body.expected_version },
          actorOf(principal, req),
        );
        return { ...marked, tracklet: await trackletSummary(db, marked.track_id) };
      },
    )
    .post(
      '/api/tracklets/objects/{object_id}/propagate',
      {
        summary:
          'Propagates the object to the next frames of its session, as POST /api/objects/{object_id}/propagate does (Kalman prediction from its track, optionally snapped to stored detections; objects of source propagated in review), and answers with the tracklet after it',
        access: 'annotator',
        params: objectParams,
        body: { name: 'PropagateIn', schema: PropagateIn },
        statuses: {
          404: 'no such object',
          422: 'the object is rejected or has no box, no frame follows it, or every next frame already holds an object of its track',
        },
      },
      async ({ params, body, principal, req }) => {
        const outcome = await propagateObject(db, params.object_id, body, actorOf(principal, req));
        return { ...outcome, tracklet: await trackletSummary(db, outcome.track_id!) };
      },
    )
    .get(
      '/api/tracklets/stats/summary',
      {
        summary:
          'Corpus statistics of tracks (or of one session’s): count, objects, length distribution, per class and tracker version, keyframe coverage',
        access: 'annotator',
        query: TrackletStatsQuery,
      },
      async ({ query }) => trackletCorpusStats(db, query.session_id ?? null),
    )
    .get(
      '/api/tracklets/{track_id}',
      {
        summary:
          'A track’s summary from the objects linked to it now: class, frame span, object count, keyframes, sources and states, mean confidence, intent, derived attributes and the attribute timeline’s spans',
        access: 'annotator',
        params: trackParams,
        statuses: noTrack,
      },
      async ({ params }) => trackletSummary(db, params.track_id),
    )
    .post(
      '/api/tracklets/{track_id}/attributes',
      {
        summary:
          'Sets attributes on the track’s objects over a frame range (both ends included; default the whole track) as one bulk edit review: one transaction, versions checked, source human; rejected objects and those already holding the values are left',
        access: 'annotator',
        params: trackParams,
        body: { name: 'TrackAttributesIn', schema: TrackAttributesIn },
        statuses: {
          ...noTrack,
          409: 'an object of the range changed while it was written',
          422: 'a frame is not of the track’s session, the range is reversed, the reserved key keyframe is set, or no object of the track lies in the range',
        },
      },
      async ({ params, body, principal, req }) =>
        setTrackAttributes(
          db,
          masks,
          params.track_id,
          {
            attrs: body.attrs,
            fromFrameId: body.from_frame_id,
            toFrameId: body.to_frame_id,
            reviewer: body.reviewer,
          },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/tracklets/{track_id}/derive',
      {
        summary:
          'Derives attributes from the track’s boxes (moving or stationary, direction, mean speed in px/s, approaching or receding, frames cut by the image edge, gaps) and stores them in the track’s attrs.derived unless dry_run. Audited',
        access: 'annotator',
        params: trackParams,
        body: { name: 'DeriveIn', schema: DeriveIn },
        statuses: noTrack,
      },
      async ({ params, body, principal, req }) =>
        deriveTrack(db, params.track_id, { dryRun: body.dry_run }, actorOf(principal, req)),
    )
    .get(
      '/api/tracklets/{track_id}/suggest-keyframes',
      {
        summary:
          'Frames to mark as keyframes: where linear interpolation between neighbouring keyframes would miss the box (time-synchronised Ramer–Douglas–Peucker on centre and size) and where the direction of motion turns; always the first and last. Writes nothing',
        access: 'annotator',
        params: trackParams,
        query: KeyframeThresholds,
        statuses: noTrack,
      },
      async ({ params, query }) => suggestTrackKeyframes(db, params.track_id, query),
    );
}

import {
  createTrackEvent,
  deleteTrackEvent,
  findTrack,
  listTrackEvents,
  patchTrackEvent,
  trackAttributeTimeline,
} from '../../../activities/tracks/events';
import { proposeSessionIntents, proposeTrackIntent, setTrackIntent } from '../../../activities/tracks/intent';
import { UnavailableError } from '../../../core/errors';
import { TRACK_EVENT_KINDS, TRACK_EVENT_KIND_INFO } from '../../../core/tracking/events';
import { INTENTS, INTENT_INFO, INTENT_RULES_VERSION, INTENT_THRESHOLDS } from '../../../core/tracking/intent';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import {
  IntentProposeIn,
  IntentSessionIn,
  IntentSetIn,
  TrackEventIn,
  TrackEventPatch,
  TrackEventsQuery,
} from './events-validators';

const INTENT_VOCAB = {
  rules_version: INTENT_RULES_VERSION,
  thresholds: INTENT_THRESHOLDS,
  intents: INTENTS.map((name) => ({ name, ...INTENT_INFO[name] })),
  event_kinds: TRACK_EVENT_KINDS.map((name) => ({ name, description: TRACK_EVENT_KIND_INFO[name] })),
};

/**
 * The `tracks` group's events, attribute timeline and intent (docs/track-events.md). Reads and
 * edits are the annotator's, like drawing and editing objects; deleting an event is the
 * reviewer's, like deleting an object.
 */
export function createTrackEventRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const trackParams = uuidParams('track_id');
  const eventParams = uuidParams('event_id');
  const noTrack = { 404: 'no such track' };
  return new RouteGroup('tracks')
    .get(
      '/api/tracks/{track_id}/events',
      {
        summary: "A track's events, ordered by their start frame, optionally of one kind",
        access: 'annotator',
        params: trackParams,
        query: TrackEventsQuery,
        statuses: noTrack,
      },
      ({ params, query }) => listTrackEvents(db, params.track_id, query),
    )
    .post(
      '/api/tracks/{track_id}/events',
      {
        summary:
          "Records what the tracked object does over a span of its session's frames (start ≤ end by frame index); source human. Audited",
        access: 'annotator',
        params: trackParams,
        body: { name: 'TrackEventIn', schema: TrackEventIn },
        successStatus: 201,
        statuses: {
          ...noTrack,
          422: "a frame that is not of the track's session, or an end before the start",
        },
      },
      ({ params, body, principal, req }) =>
        createTrackEvent(db, params.track_id, body, actorOf(principal, req)),
    )
    .patch(
      '/api/track-events/{event_id}',
      {
        summary:
          "Changes a track event's kind, span or attrs (attrs replaced whole); the span is checked again. Audited",
        access: 'annotator',
        params: eventParams,
        body: { name: 'TrackEventPatch', schema: TrackEventPatch },
        statuses: {
          404: 'no such track event',
          422: "a frame that is not of the track's session, or an end before the start",
        },
      },
      ({ params, body, principal, req }) =>
        patchTrackEvent(db, params.event_id, body, actorOf(principal, req)),
    )
    .delete(
      '/api/track-events/{event_id}',
      {
        summary: 'Deletes a track event. Audited, with what it held',
        access: 'reviewer',
        params: eventParams,
        statuses: { 404: 'no such track event' },
      },
      ({ params, principal, req }) => deleteTrackEvent(db, params.event_id, actorOf(principal, req)),
    )
    .get(
      '/api/tracks/{track_id}/attribute-timeline',
      {
        summary:
          "Per frame of the track (by frame index) its object's class, state and attrs, and the spans over which the class, the state and each attribute hold one value",
        access: 'annotator',
        params: trackParams,
        statuses: noTrack,
      },
      ({ params }) => trackAttributeTimeline(db, params.track_id),
    )
    .get(
      '/api/intent/vocab',
      {
        summary:
          'The intent vocabulary (which values the motion rules can propose), the rules version and thresholds, and the track event kinds',
        access: 'annotator',
      },
      () => INTENT_VOCAB,
    )
    .post(
      '/api/tracks/{track_id}/intent/set',
      {
        summary: "A person sets the track's intent (attrs.intent, with who and when). Audited",
        access: 'annotator',
        params: trackParams,
        body: { name: 'IntentSetIn', schema: IntentSetIn },
        statuses: noTrack,
      },
      ({ params, body, principal, req }) =>
        setTrackIntent(db, params.track_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/tracks/{track_id}/intent/propose',
      {
        summary: `Proposes the track's intent from its trajectory's image motion (${INTENT_RULES_VERSION}), with the evidence; stored only with apply: true, never over an intent a person set`,
        access: 'annotator',
        params: trackParams,
        body: { name: 'IntentProposeIn', schema: IntentProposeIn },
        statuses: noTrack,
      },
      ({ params, body, principal, req }) =>
        proposeTrackIntent(db, params.track_id, body.apply, actorOf(principal, req)),
    )
    .post(
      '/api/intent/propose-session',
      {
        summary:
          "Proposes an intent for every track of a session, with the evidence and each track's current intent; stores nothing",
        access: 'annotator',
        body: { name: 'IntentSessionIn', schema: IntentSessionIn },
        statuses: { 404: 'no such session' },
      },
      ({ body }) => proposeSessionIntents(db, body.session_id),
    )
    .post(
      '/api/tracks/{track_id}/intent/vlm',
      {
        summary:
          "Would ask a vision-language model to judge the track's intent: refused by name, no vision-language intent verifier is configured",
        access: 'annotator',
        params: trackParams,
        statuses: { ...noTrack, 503: 'no vision-language intent verifier is configured' },
      },
      async ({ params }) => {
        await findTrack(db, params.track_id);
        throw new UnavailableError(
          'no vision-language intent verifier is configured: this deployment has none (the auto-label verifier judges detections only); use POST /api/tracks/{track_id}/intent/propose or intent/set',
          { verifier: 'intent-vlm', configured: false },
        );
      },
    );
}

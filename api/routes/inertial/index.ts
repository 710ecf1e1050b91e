import {
  correlateTimeline,
  createTimelineEvent,
  deleteTimelineEvent,
  keepInertialEvents,
  keepSceneChanges,
  listTimelineEvents,
  patchTimelineEvent,
} from '../../../activities/ego/events';
import { egoState, inertialEvents, sessionConsistency, sessionTimeline } from '../../../activities/ego/reads';
import { INERTIAL_RULES_VERSION } from '../../../core/ego/inertial';
import { SCENE_RULES_VERSION } from '../../../core/ego/scene';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import {
  CorrelateIn,
  EgoStateQuery,
  InertialAutoIn,
  InertialQuery,
  QaQuery,
  SceneIn,
  TimelineEventIn,
  TimelineEventPatch,
  TimelineEventsQuery,
  TimelineQuery,
} from './validators';

/**
 * Ego state, inertial and timeline events of a session (docs/ego-state.md). Reads and edits are
 * the annotator's, like track events; deleting an event is the reviewer's, like deleting a track
 * event or an object.
 */
export function createInertialRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const sessionParams = uuidParams('session_id');
  const eventParams = uuidParams('event_id');
  const noSession = { 404: 'no such session' };
  const noImu = { 422: 'the session has no IMU stream (refused by name), or several and no topic chosen' };
  const spanProblem =
    'an end before the start, an event after the end of the drive, or a session with no drive to place it on';
  return new RouteGroup('inertial')
    .get(
      '/api/sessions/{session_id}/egostate',
      {
        summary:
          "The session's ego streams (imu, gnss, speed) read from its drive: per stream its topic, message type, span, rate and per-channel unit, min, max and mean; with at_ms each channel interpolated at that time; with samples=true the samples of [from_ms, to_ms]; and how many frames carry an ego speed, from which speed stream",
        access: 'annotator',
        params: sessionParams,
        query: EgoStateQuery,
        statuses: noSession,
      },
      ({ params, query }) => egoState(db, params.session_id, query),
    )
    .get(
      '/api/sessions/{session_id}/inertial_events',
      {
        summary: `Inertial events of the session's IMU (${INERTIAL_RULES_VERSION}): hard braking, hard acceleration, sharp turn, bump, each with its span, channel, peak and the thresholds (defaults overridable by query); derived on read, nothing stored`,
        access: 'annotator',
        params: sessionParams,
        query: InertialQuery,
        statuses: { ...noSession, ...noImu },
      },
      ({ params, query }) => {
        const { topic, kind, ...thresholds } = query;
        return inertialEvents(db, params.session_id, { topic, kind, thresholds });
      },
    )
    .get(
      '/api/sessions/{session_id}/events',
      {
        summary:
          "The session's timeline events in time order, optionally of one source (human, inertial, scene) or kind, or meeting [from_ms, to_ms]",
        access: 'annotator',
        params: sessionParams,
        query: TimelineEventsQuery,
        statuses: noSession,
      },
      ({ params, query }) => listTimelineEvents(db, params.session_id, query),
    )
    .post(
      '/api/sessions/{session_id}/events',
      {
        summary:
          "Records a timeline event over a span (or at an instant) of the drive, on the frames' clock; source human. Audited",
        access: 'annotator',
        params: sessionParams,
        body: { name: 'TimelineEventIn', schema: TimelineEventIn },
        successStatus: 201,
        statuses: { ...noSession, 422: spanProblem },
      },
      ({ params, body, principal, req }) =>
        createTimelineEvent(db, params.session_id, body, actorOf(principal, req)),
    )
    .patch(
      '/api/events/{event_id}',
      {
        summary:
          "Changes a timeline event's kind, span, label, attrs (replaced whole) or driving event (one of its session; null unties it); the span is checked again. Audited",
        access: 'annotator',
        params: eventParams,
        body: { name: 'TimelineEventPatch', schema: TimelineEventPatch },
        statuses: {
          404: 'no such timeline event',
          422: `${spanProblem}; a driving event not of the session`,
        },
      },
      ({ params, body, principal, req }) =>
        patchTimelineEvent(db, params.event_id, body, actorOf(principal, req)),
    )
    .delete(
      '/api/events/{event_id}',
      {
        summary: 'Deletes a timeline event. Audited, with what it held',
        access: 'reviewer',
        params: eventParams,
        statuses: { 404: 'no such timeline event' },
      },
      ({ params, principal, req }) => deleteTimelineEvent(db, params.event_id, actorOf(principal, req)),
    )
    .post(
      '/api/sessions/{session_id}/events/auto',
      {
        summary: `Keeps the IMU's inertial events (${INERTIAL_RULES_VERSION}, thresholds as for inertial_events) as timeline events, source inertial, with what was measured in attrs; a moment already kept (an event of the same kind overlapping it) is not kept again, so running twice adds nothing. Audited`,
        access: 'annotator',
        params: sessionParams,
        body: { name: 'InertialAutoIn', schema: InertialAutoIn },
        statuses: { ...noSession, ...noImu },
      },
      ({ params, body, principal, req }) => {
        const { topic, ...thresholds } = body;
        return keepInertialEvents(db, params.session_id, { topic, thresholds }, actorOf(principal, req));
      },
    )
    .post(
      '/api/sessions/{session_id}/events/scene',
      {
        summary: `Keeps scene changes (${SCENE_RULES_VERSION}) as timeline events, source scene: consecutive frames whose stored perceptual hashes differ in at least phash_distance bits (another picture) or whose stored mean luma moves by luma_delta (a change of light); consecutive changes are one event; a moment already kept is not kept again. Audited`,
        access: 'annotator',
        params: sessionParams,
        body: { name: 'SceneIn', schema: SceneIn },
        statuses: {
          ...noSession,
          422: 'fewer than two frames, or frames holding neither a perceptual hash nor exposure measurements',
        },
      },
      ({ params, body, principal, req }) =>
        keepSceneChanges(db, params.session_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/sessions/{session_id}/events/correlate',
      {
        summary:
          "Ties each of the session's timeline events to the driving event of the session it overlaps most (widened by tolerance_ms; rejected driving events are no candidates), setting driving_event_id; events tied already are kept unless replace. Audited",
        access: 'annotator',
        params: sessionParams,
        body: { name: 'CorrelateIn', schema: CorrelateIn },
        statuses: noSession,
      },
      ({ params, body, principal, req }) =>
        correlateTimeline(db, params.session_id, body, actorOf(principal, req)),
    )
    .get(
      '/api/sessions/{session_id}/timeline',
      {
        summary:
          "The session's timeline: the drive's length, the frames' span, each ego stream's span, and its timeline events and driving events (not rejected ones unless asked) in time order, each with the frames it shows and the ties between them",
        access: 'annotator',
        params: sessionParams,
        query: TimelineQuery,
        statuses: noSession,
      },
      ({ params, query }) => sessionTimeline(db, params.session_id, query),
    )
    .get(
      '/api/sessions/{session_id}/qa/consistency',
      {
        summary:
          'Consistency of the ego state and timeline: each ego stream covers the frames, no gap in the IMU or speed streams beyond max_gap_ms, every frame inside the speed stream has its ego speed (and no other), every timeline event lies within the frames, every tie to a driving event still overlaps it, every track point sits on a frame of the session at its time; each check passes, fails with its issues, or is skipped with the reason',
        access: 'annotator',
        params: sessionParams,
        query: QaQuery,
        statuses: noSession,
      },
      ({ params, query }) => sessionConsistency(db, params.session_id, query),
    );
}

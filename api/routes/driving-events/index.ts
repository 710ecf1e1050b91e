import {
  corpusDrivingEventSummary,
  createHumanDrivingEvent,
  deriveAndStoreDrivingEvents,
  listSessionDrivingEvents,
  listTrackDrivingEvents,
  previewDrivingEvents,
  reviewDrivingEvent,
  searchDrivingEvents,
  sessionDrivingEventSummary,
} from '../../../activities/driving-events';
import { DERIVER_VERSION, drivingEventTaxonomy } from '../../../core/driving-events';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { DrivingEventIn, DrivingEventSearchQuery, DrivingEventsQuery, ReviewIn } from './validators';

const TAXONOMY = drivingEventTaxonomy();

/**
 * Driving events derived from tracks and ego state, or made by a person (docs/driving-events.md).
 * Reading, previewing, deriving and recording are the annotator's; confirming and rejecting are
 * the reviewer's.
 */
export function createDrivingEventRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const sessionParams = uuidParams('session_id');
  const eventParams = uuidParams('event_id');
  const noSession = { 404: 'no such session' };
  const review = (decision: 'confirmed' | 'rejected') =>
    ({
      summary: `A reviewer ${decision === 'confirmed' ? 'confirms' : 'rejects'} the event, with an optional note (the other decision may be replaced). Audited`,
      access: 'reviewer',
      params: eventParams,
      body: { name: 'DrivingEventReviewIn', schema: ReviewIn },
      statuses: { 404: 'no such driving event', 409: `the event is already ${decision}` },
    }) as const;
  return new RouteGroup('driving-events')
    .post('/api/driving-events/{event_id}/confirm', review('confirmed'), ({ params, body, principal, req }) =>
      reviewDrivingEvent(db, params.event_id, 'confirmed', body.note, actorOf(principal, req)),
    )
    .post('/api/driving-events/{event_id}/reject', review('rejected'), ({ params, body, principal, req }) =>
      reviewDrivingEvent(db, params.event_id, 'rejected', body.note, actorOf(principal, req)),
    )
    .get(
      '/api/events/corpus-summary',
      {
        summary:
          'Driving events across the corpus: counts per kind and state, per state and source, and how many sessions have any',
        access: 'annotator',
      },
      () => corpusDrivingEventSummary(db),
    )
    .get(
      '/api/events/search',
      {
        summary:
          'Driving events across the corpus, newest first, by keyset pagination; filtered by kind, session, state, source, participating class, time span and creation time',
        access: 'annotator',
        query: DrivingEventSearchQuery,
      },
      ({ query }) => searchDrivingEvents(db, query),
    )
    .get(
      '/api/events/taxonomy',
      {
        summary: `The driving-event kinds, each with its rule, participants and thresholds, the ego corridor and the deriver version (${DERIVER_VERSION})`,
        access: 'annotator',
      },
      () => TAXONOMY,
    )
    .get(
      '/api/sessions/{session_id}/driving-events',
      {
        summary: "A session's driving events in time order, optionally of one kind, state or source",
        access: 'annotator',
        params: sessionParams,
        query: DrivingEventsQuery,
        statuses: noSession,
      },
      ({ params, query }) => listSessionDrivingEvents(db, params.session_id, query),
    )
    .post(
      '/api/sessions/{session_id}/driving-events',
      {
        summary:
          'Records a driving event a person saw (source human, proposed until reviewed), over two frames of the session or a time span, with its tracks. Audited',
        access: 'annotator',
        params: sessionParams,
        body: { name: 'DrivingEventIn', schema: DrivingEventIn },
        successStatus: 201,
        statuses: {
          ...noSession,
          422: 'a frame or track that is not of the session, or an end before the start',
        },
      },
      ({ params, body, principal, req }) =>
        createHumanDrivingEvent(db, params.session_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/sessions/{session_id}/driving-events/derive',
      {
        summary: `Derives the session's driving events by the taxonomy's rules (${DERIVER_VERSION}) and stores them as proposals with their evidence: the deriver's undecided proposals are replaced, reviewed and human events kept and not proposed again. Audited`,
        access: 'annotator',
        params: sessionParams,
        statuses: noSession,
      },
      ({ params, principal, req }) =>
        deriveAndStoreDrivingEvents(db, params.session_id, actorOf(principal, req)),
    )
    .post(
      '/api/sessions/{session_id}/driving-events/preview',
      {
        summary:
          'What derive would propose for the session, with the evidence, the rules that could not run and the kept events each proposal repeats; stores nothing',
        access: 'annotator',
        params: sessionParams,
        statuses: noSession,
      },
      ({ params }) => previewDrivingEvents(db, params.session_id),
    )
    .get(
      '/api/sessions/{session_id}/driving-events/summary',
      {
        summary: "A session's driving events counted per kind and state, per state and per source",
        access: 'annotator',
        params: sessionParams,
        statuses: noSession,
      },
      ({ params }) => sessionDrivingEventSummary(db, params.session_id),
    )
    .get(
      '/api/tracks/{track_id}/driving-events',
      {
        summary: 'The driving events a track takes part in, in time order',
        access: 'annotator',
        params: uuidParams('track_id'),
        query: DrivingEventsQuery,
        statuses: { 404: 'no such track' },
      },
      ({ params, query }) => listTrackDrivingEvents(db, params.track_id, query),
    );
}

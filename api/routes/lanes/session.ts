import { classifySessionLanes, linkSessionLanes } from '../../../activities/lanes/session';
import { laneTypeCoverage } from '../../../activities/lanes/store';
import { CLASSIFIER_VERSION } from '../../../core/lanes/classify';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { LaneClassifyIn, LaneLinkIn, TypeCoverageQuery } from './validators';

/**
 * Lanes across a session's frames: classify, link, type coverage (docs/lanes.md). Classify and link
 * rewrite many lanes at once, people's too, so they are the reviewer's.
 */
export function createSessionLaneRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const sessionParams = uuidParams('session_id');
  return new RouteGroup('driving-events')
    .post(
      '/api/sessions/{session_id}/lanes/classify',
      {
        summary: `Types the session's lanes from their frames' pixels (${CLASSIFIER_VERSION}): dashed or solid by the duty cycle of the paint along the lane, double lines, Botts' dots, road edges, the colour in attrs; only lanes whose type is unknown or was not set by a person, unless overwrite. Answers counts per type. Audited`,
        access: 'reviewer',
        params: sessionParams,
        body: { name: 'LaneClassifyIn', schema: LaneClassifyIn },
        statuses: { 404: 'no such session', 409: 'a lane changed while the session was classified' },
      },
      ({ params, body, principal, req }) =>
        classifySessionLanes(db, storage, params.session_id, body, actorOf(principal, req)),
    )
    .post(
      '/api/sessions/{session_id}/lanes/link',
      {
        summary:
          "Links the session's lanes across consecutive frames into lane groups: one-to-one by the polylines' mean distance over their shared rows, under a limit; existing group ids are kept where they fit. Audited",
        access: 'reviewer',
        params: sessionParams,
        body: { name: 'LaneLinkIn', schema: LaneLinkIn },
        statuses: { 404: 'no such session', 409: 'a lane changed while the session was linked' },
      },
      ({ params, body, principal, req }) =>
        linkSessionLanes(db, params.session_id, body, actorOf(principal, req)),
    )
    .get(
      '/api/lanes/type-coverage',
      {
        summary:
          'Lanes per type and per source over the corpus (or one session), frames with and without lanes, and per session with by_session=true',
        access: 'annotator',
        query: TypeCoverageQuery,
        statuses: { 404: 'no such session' },
      },
      ({ query }) => laneTypeCoverage(db, query),
    );
}

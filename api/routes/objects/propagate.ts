import { propagateObject } from '../../../activities/propagate';
import { PropagateIn } from '../../../core/tracklets/propagate';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';

/**
 * Propagate an object to the next frames (docs/propagation.md). The annotator's, as interpolation
 * is: what it makes are machine objects in review, never verdicts, and no object is overwritten.
 */
export function createObjectPropagateRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('objects').post(
    '/api/objects/{object_id}/propagate',
    {
      summary:
        'Propagates the object to the next frames of its session (by time): the tracker’s constant-velocity Kalman filter seeded from its track predicts each box, optionally snapped to the best-overlapping stored detection of its class (redetect); objects of source propagated in state review join its track (one is made if it has none). Frames where the track has an object are skipped. One transaction, audited',
      access: 'annotator',
      params: uuidParams('object_id'),
      body: { name: 'PropagateIn', schema: PropagateIn },
      statuses: {
        404: 'no such object',
        422: 'the object is rejected or has no box, no frame follows it, or every next frame already holds an object of its track',
      },
    },
    async ({ params, body, principal, req }) =>
      propagateObject(db, params.object_id, body, actorOf(principal, req)),
  );
}

import { planObjectPropagation, propagateObjectAsRun } from '../../../activities/propagate';
import { PropagateIn } from '../../../core/tracklets/propagate';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';

/**
 * The agent's propagate plan/apply pair (docs/propagation.md): the plan writes nothing (as every
 * agent plan route), the apply is one revertible AgentRun of kind propagate. The reviewer's, as the
 * agent's other one-frame runs are; the revert is the admin's (POST /api/agent/runs/{run_id}/revert).
 */
export function createAgentPropagateRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const objectParams = uuidParams('object_id');
  const statuses = {
    404: 'no such object',
    422: 'the object is rejected or has no box, or no frame follows it',
  };
  return new RouteGroup('agent')
    .post(
      '/api/agent/objects/{object_id}/propagate/plan',
      {
        summary:
          'What propagating the object to its next frames would create (per frame: the predicted box, the detection it would snap to, or why the frame is skipped), without writing anything',
        access: 'reviewer',
        params: objectParams,
        body: { name: 'PropagateIn', schema: PropagateIn },
        statuses,
      },
      async ({ params, body }) => ({
        dry_run: true,
        ...(await planObjectPropagation(db, params.object_id, body)),
      }),
    )
    .post(
      '/api/agent/objects/{object_id}/propagate',
      {
        summary:
          'Propagates the object to its next frames as one revertible AgentRun (kind propagate): the objects of POST /api/objects/{object_id}/propagate, recorded per frame so POST /api/agent/runs/{run_id}/revert removes those nobody has reviewed since',
        access: 'reviewer',
        params: objectParams,
        body: { name: 'PropagateIn', schema: PropagateIn },
        statuses: {
          ...statuses,
          422: `${statuses[422]}, or every next frame already holds an object of its track`,
        },
      },
      async ({ params, body, principal, req }) =>
        propagateObjectAsRun(deps, params.object_id, body, actorOf(principal, req)),
    );
}

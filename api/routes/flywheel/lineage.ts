import { deploymentLineage } from '../../../activities/flywheel/lineage';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/**
 * A deployment's lineage, for the `flywheel` group (docs/flywheel-lineage.md). Annotators read it:
 * each of its parts is already theirs to read (the fleet, the edge gate, the registry, training
 * jobs, campaigns, a commit's lineage), here joined into one chain.
 */
export function createFlywheelLineageRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('flywheel').get(
    '/api/flywheel/lineage/{deployment_id}',
    {
      summary:
        "What an edge rollout runs, back to its data: the artifact, its model and the model's ancestors, the training job, the dataset commit with its sessions and frames, the gate decisions and campaign iterations about the model, and the devices holding the artifact now; a link the data lacks is null with why in `missing`",
      access: 'annotator',
      params: uuidParams('deployment_id'),
      statuses: { 404: 'no such deployment' },
    },
    async ({ params }) => deploymentLineage(deps, params.deployment_id),
  );
}

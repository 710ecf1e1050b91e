import { trainingRegistry } from '../../../activities/registry/models';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { ModelsQuery } from '../models/validators';

/** GET /api/training/registry (filed under `training`): the model registry as training sees it. */
export function createTrainingRegistryRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('training').get(
    '/api/training/registry',
    {
      summary:
        'The model registry with training lineage: every model version, newest first, with its state, parent, dataset commit and latest evaluations, and the training job that produced it (status, configuration, metrics, curve summarised)',
      access: 'annotator',
      query: ModelsQuery,
      statuses: { 404: 'the cursor names no model of this listing' },
    },
    async ({ query }) => trainingRegistry(deps.db, query),
  );
}

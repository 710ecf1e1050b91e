import { listModels } from '../../../activities/registry/models';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { ModelsQuery } from './validators';

/** The `models` group: every model version the registry knows (docs/promotion.md). */
export function createModelsRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('models').get(
    '/api/models',
    {
      summary:
        'Every model version, newest first: state (candidate, champion, retired), lineage (parent, dataset commit, training job), SHA-256 and size of its file, and its latest evaluation on each gold set',
      access: 'annotator',
      query: ModelsQuery,
      statuses: { 404: 'the cursor names no model of this listing' },
    },
    async ({ query }) => listModels(deps.db, query),
  );
}

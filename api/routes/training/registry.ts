import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** GET /api/training/registry (filed under `training`): the model registry as training sees it (stub: being built for issue 15). */
export function createTrainingRegistryRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('training');
}

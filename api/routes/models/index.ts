import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `models` group (stub: being built for issue 15). */
export function createModelsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('models');
}

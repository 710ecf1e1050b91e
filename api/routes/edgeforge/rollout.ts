import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** POST /api/edgeforge/rollout (stub: being built for issue 15). */
export function createRolloutRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('edge forge');
}

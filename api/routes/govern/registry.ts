import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The registry and promotion routes of the `govern` group (stub: being built for issue 15). */
export function createGovernRegistryRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('govern');
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** Cloud GPU sessions of the `cloud` group (stub: being built for issue 15). */
export function createCloudSessionRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('cloud');
}

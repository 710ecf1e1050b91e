import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `integrations` group (issue 17). */
export function createIntegrationsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('integrations');
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `inbox` group (issue 17). */
export function createInboxRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('inbox');
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `service-accounts` group (issue 17). */
export function createServiceAccountsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('service-accounts');
}

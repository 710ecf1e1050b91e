import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `jobs` group (issue 17). */
export function createJobsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('jobs');
}

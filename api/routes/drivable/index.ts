import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `drivable` group: drivable-area polygons per frame, backfill, coverage (stub: being built for issue 21). */
export function createDrivableRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('drivable');
}

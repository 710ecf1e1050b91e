import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** POST /api/segment (filed under `objects`): a mask for a box or point prompt (stub: being built for issue 21). */
export function createSegmentRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('objects');
}

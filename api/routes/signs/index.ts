import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `signs` group: traffic-sign recognition and its taxonomy (stub: being built for issue 21). */
export function createSignsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('signs');
}

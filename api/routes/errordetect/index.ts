import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `errordetect` group (docs/quality.md). */
export function createErrordetectRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('errordetect');
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The quality routes of the `objects` group (docs/quality.md). */
export function createObjectQualityRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('objects');
}

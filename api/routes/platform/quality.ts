import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The quality routes of the `platform` group (docs/quality.md). */
export function createPlatformQualityRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('platform');
}

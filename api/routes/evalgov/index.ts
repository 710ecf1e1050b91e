import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `evaluation governance` group (docs/quality.md). */
export function createEvalgovRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('evaluation governance');
}

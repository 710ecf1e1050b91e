import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `experiments` group (stub: being built for issue 15). */
export function createExperimentsRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('experiments');
}

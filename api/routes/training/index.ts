import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `training` group: jobs, runs, curves, sweeps (stub: being built for issue 15). */
export function createTrainingRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('training');
}

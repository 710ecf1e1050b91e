import type { ActivityDeps } from '../deps';

/** Edge-forge activities (compile, benchmark, cooptimize, thermal) of the `cpu` queue (stub: being built for issue 15). */
export function createEdgeForgeActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

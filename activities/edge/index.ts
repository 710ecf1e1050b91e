import type { ActivityDeps } from '../deps';

/** Fleet rollout activities of the `cpu` queue (stub: being built for issue 15). */
export function createEdgeRolloutActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

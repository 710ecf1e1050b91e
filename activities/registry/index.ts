import type { ActivityDeps } from '../deps';

/** Registry and promotion-gate activities of the `cpu` queue (stub: being built for issue 15). */
export function createRegistryActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

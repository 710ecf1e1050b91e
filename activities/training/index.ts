import type { ActivityDeps } from '../deps';

/** Training bookkeeping activities of the `cpu` queue (stub: being built for issue 15). */
export function createTrainingActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

/** The training activity of the `gpu` queue (stub: being built for issue 15). */
export function createTrainingGpuActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

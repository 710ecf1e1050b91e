import type { ActivityDeps } from '../deps';
import { createRolloutSteps } from './rollouts';

export * from './fleet';
export * from './records';
export * from './rollouts';

/** Fleet rollout activities of the `cpu` queue: the steps of workflow `rollout-<id>` (docs/edge-rollout.md). */
export function createEdgeRolloutActivities(deps: Pick<ActivityDeps, 'db'>) {
  return createRolloutSteps(deps.db);
}

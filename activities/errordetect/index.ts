import type { ActivityDeps } from '../deps';
import { createErrorRunActivities } from './runs';

export * from './candidates';
export * from './reports';
export * from './runs';

/**
 * Activities of label-error detection (docs/quality-errordetect.md), on the `cpu` queue: the
 * steps of workflow `errordetect-<id>` around the GPU prediction run it may start as a child.
 */
export function createErrorDetectActivities(deps: Pick<ActivityDeps, 'db'>) {
  return createErrorRunActivities(deps.db);
}

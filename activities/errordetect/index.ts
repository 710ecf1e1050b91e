import type { ActivityDeps } from '../deps';

/** Activities of label-error detection (docs/quality.md). */
export function createErrorDetectActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

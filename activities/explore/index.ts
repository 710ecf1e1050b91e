import type { ActivityDeps } from '../deps';

/** Activities of the explore group (docs/quality.md). */
export function createExploreActivities(deps: ActivityDeps) {
  void deps;
  return {};
}

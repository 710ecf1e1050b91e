import type { ActivityDeps } from '../deps';
import { createExploreProjectionActivities } from './projections';

/**
 * Activities of the explore group (docs/quality-explore.md): the projection's layout, run by
 * exploreProjectionWorkflow. The group's synchronous reads and writes (evaluations, facets, tags,
 * views, selection) are plain functions in this folder, called by the API.
 */
export function createExploreActivities(deps: ActivityDeps) {
  return {
    ...createExploreProjectionActivities(deps),
  };
}

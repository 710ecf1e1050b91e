import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { ProjectionOutcome } from '../activities/explore/projections';
import { reportingFailure } from './failure';

export interface ExploreProjectionWorkflowInput {
  projectionId: string;
}

const notice = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});
const { projectExploreFrames } = proxyActivities<CpuActivities>({
  // One activity lays out at most 5,000 frames (about a minute on one core); it heartbeats every
  // ten UMAP epochs, so a worker that dies is noticed within two minutes and the retry starts over
  // (it replaces any points an earlier attempt wrote).
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: {
    initialInterval: '1 second',
    maximumAttempts: 3,
    nonRetryableErrorTypes: ['ProjectionNotFound', 'TooFewEmbeddings'],
  },
});

/**
 * ExploreProjectionWorkflow (`explore-projection-<projection_id>`): lays out the projection's frames
 * by UMAP or PCA and writes their points; a projection that gives up is marked failed with the
 * reason.
 */
export async function exploreProjectionWorkflow(
  input: ExploreProjectionWorkflowInput,
): Promise<ProjectionOutcome & { points: number }> {
  return reportingFailure(
    () => projectExploreFrames(input),
    (error) => notice.failExploreProjection({ projectionId: input.projectionId, error }),
  );
}

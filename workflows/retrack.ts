import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { RetrackInput, RetrackOutcome } from '../activities/tracks/retrack';

const steps = proxyActivities<CpuActivities>({
  // One transaction replaces the session's tracks, so a retried attempt starts from what is stored.
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['NotFoundError'] },
});

/** RetrackWorkflow (`retrack-<session_id>`, docs/tracks.md): re-runs association for one session. */
export async function retrackWorkflow(input: RetrackInput): Promise<RetrackOutcome> {
  return steps.retrackSession(input);
}

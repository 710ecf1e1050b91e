import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { DiscoverySummary } from '../activities/discovery';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';

/** One discovery run at a time: a second would mine the same corpus into the same queue. */
export const DISCOVERY_WORKFLOW_ID = 'discovery-run';

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});
// Comparing up to 3000 frames pairwise is seconds of CPU; the writes are one row per finding.
const { mineDiscoveryCandidates } = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 3 },
});

/** A discovery run (`discovery-run`, docs/discovery.md): mine the scope into the queue, then settle the run. */
export async function discoveryWorkflow(input: { runId: string }): Promise<DiscoverySummary> {
  return reportingFailure(
    async () => {
      const summary = await mineDiscoveryCandidates(input);
      await steps.finishDiscoveryRun({ runId: input.runId, status: 'completed', summary });
      return summary;
    },
    (error) => steps.finishDiscoveryRun({ runId: input.runId, status: 'failed', error }),
  );
}

import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import type { CpuActivities } from '../activities';
import type { RevertTally } from '../activities/agent-runs/runs';

const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });
const { revertAgentRun } = proxyActivities<CpuActivities>({
  // Batches commit with their progress, so a retry resumes with the frames not yet reverted.
  startToCloseTimeout: '6 hours',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 5 },
});

export interface RevertAgentRunInput {
  runId: string;
  actorId: string | null;
}

/** Reverts an AgentRun (`agent-run-revert-<run_id>`): database work on the `cpu` queue. */
export async function revertAgentRunWorkflow(input: RevertAgentRunInput): Promise<RevertTally> {
  return reportingFailure(
    () => revertAgentRun(input),
    (error) => notice.failAgentRunRevert({ runId: input.runId, error }),
  );
}

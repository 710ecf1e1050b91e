import { proxyActivities, rootCause } from '@temporalio/workflow';
import { gpuSlotActivityOptions } from './gpu-slot';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { GpuActivities } from '../activities';

export interface DrivableBackfillWorkflowInput {
  runId: string;
  sessionIds: string[];
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

/**
 * A drivable-area backfill (`drivable-backfill`, one at a time), recorded as an AgentRun of kind
 * drivable-backfill and reverted like any run (docs/drivable.md): one gpu activity per session,
 * in the order given; a session that fails is recorded with its reason and the walk goes on. The
 * sessions are at most 1,000 (the route's bound), so the history stays bounded without continuing
 * as new.
 */
export async function drivableBackfillWorkflow(input: DrivableBackfillWorkflowInput): Promise<void> {
  const { backfillDrivableSession } = proxyActivities<GpuActivities>(
    gpuSlotActivityOptions(input, ['UnavailableError', 'NotFoundError']),
  );
  const steps = proxyActivities<GpuActivities>({
    ...WAIT_FOR_STEP_ON_CANCEL,
    taskQueue: input.gpuTaskQueue,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 10 },
  });
  await reportingFailure(
    async () => {
      for (const sessionId of input.sessionIds) {
        try {
          await backfillDrivableSession({ runId: input.runId, sessionId });
        } catch (err) {
          await steps.failDrivableSession({
            runId: input.runId,
            sessionId,
            reason: rootCause(err) ?? String(err),
          });
        }
      }
      await steps.finishDrivableBackfill({ runId: input.runId, status: 'completed' });
    },
    (error) => steps.finishDrivableBackfill({ runId: input.runId, status: 'failed', error }),
  );
}

import { patched, proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import { gpuSlotActivityOptions } from './gpu-slot';
import type { CpuActivities, GpuActivities } from '../activities';
import type { AutolabelSessionInput, AutolabelSessionResult } from '../activities/autolabel';

export interface AutolabelWorkflowInput extends AutolabelSessionInput {
  /** The gpu task queue's name (config temporal.gpuTaskQueue). */
  gpuTaskQueue: string;
  /** How soon a session whose worker died is retried (config autolabel.heartbeatTimeoutSeconds). */
  heartbeatTimeoutSeconds: number;
}

const bookkeeping = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

const tracking = proxyActivities<CpuActivities>({
  // One transaction replaces the session's tracks, so a retried attempt starts from what is stored.
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['NotFoundError'] },
});

/**
 * AutoLabelWorkflow (`autolabel-<session_id>`): the detection work of one session is one
 * heartbeating activity on the `gpu` queue, whose single slot makes sessions run one after the
 * other. A worker that dies stops heartbeating; the retry resumes after the last committed frame.
 * Then the session is tracked again on the cpu queue (docs/tracks.md "After every auto-label run").
 */
export async function autoLabelWorkflow(input: AutolabelWorkflowInput): Promise<AutolabelSessionResult> {
  const { autolabelSession } = proxyActivities<GpuActivities>(
    gpuSlotActivityOptions(input, [
      'ModelUnavailable',
      'SessionQuarantined',
      'SessionNotFound',
      'JobNotFound',
    ]),
  );
  const result = await reportingFailure(
    () => autolabelSession({ jobId: input.jobId, sessionId: input.sessionId }),
    (error) => bookkeeping.failAutolabelJob({ jobId: input.jobId, error }),
  );
  // The objects the run replaced left their tracks; histories recorded before this step replay without it.
  if (patched('retrack-after-autolabel'))
    await tracking.retrackAfterAutolabel({ sessionId: input.sessionId });
  return result;
}

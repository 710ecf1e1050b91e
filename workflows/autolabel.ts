import { proxyActivities } from '@temporalio/workflow';
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

/**
 * AutoLabelWorkflow (`autolabel-<session_id>`): the detection work of one session is one
 * heartbeating activity on the `gpu` queue, whose single slot makes sessions run one after the
 * other. A worker that dies stops heartbeating; the retry resumes after the last committed frame.
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
  return reportingFailure(
    () => autolabelSession({ jobId: input.jobId, sessionId: input.sessionId }),
    (error) => bookkeeping.failAutolabelJob({ jobId: input.jobId, error }),
  );
}

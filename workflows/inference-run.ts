import { proxyActivities } from '@temporalio/workflow';
import type { CpuActivities, GpuActivities } from '../activities';
import { reportingFailure } from './failure';
import { gpuSlotActivityOptions } from './gpu-slot';

export interface InferenceRunWorkflowInput {
  runId: string;
  workflowId: string;
  /** The gpu task queue's name (config temporal.gpuTaskQueue). */
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

const bookkeeping = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

/**
 * InferenceRunWorkflow (`inference-run-<run_id>`): the detector over a run's frames is one
 * heartbeating activity on the `gpu` queue, so it waits for the single slot like an auto-label
 * session; a worker that dies stops heartbeating and the retry resumes after the last committed frame.
 */
export async function inferenceRunWorkflow(
  input: InferenceRunWorkflowInput,
): Promise<{ framesDone: number; predictions: number }> {
  const { predictRun } = proxyActivities<GpuActivities>(
    gpuSlotActivityOptions(input, ['ModelUnavailable', 'RunNotFound']),
  );
  return reportingFailure(
    () => predictRun({ runId: input.runId, workflowId: input.workflowId }),
    (error) => bookkeeping.failInferenceRun({ runId: input.runId, error }),
  );
}

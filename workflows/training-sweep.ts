import { executeChild, proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import { trainingWorkflow } from './training';

export interface TrainingSweepWorkflowInput {
  sweepId: string;
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

const bookkeeping = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

/**
 * TrainingSweepWorkflow (`training-sweep-<sweep_id>`): one training job per grid point, each run as
 * a child `trainingWorkflow` under its own `training-<job_id>`. The children start together and
 * queue for the GPU slot, which runs them one at a time; a child that fails or is cancelled does
 * not stop the others. The sweep ends ranked by its metric.
 */
export async function trainingSweepWorkflow(
  input: TrainingSweepWorkflowInput,
): Promise<{ status: string; bestJobId: string | null; bestValue: number | null }> {
  const children = await bookkeeping.planSweep({ sweepId: input.sweepId });
  await Promise.allSettled(
    children.map((c) =>
      executeChild(trainingWorkflow, {
        workflowId: c.workflowId,
        args: [
          {
            jobId: c.jobId,
            gpuTaskQueue: input.gpuTaskQueue,
            heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds,
            cloudSessionId: null,
          },
        ],
      }),
    ),
  );
  return bookkeeping.finishSweep({ sweepId: input.sweepId });
}

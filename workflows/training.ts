import {
  ActivityCancellationType,
  CancellationScope,
  isCancellation,
  proxyActivities,
} from '@temporalio/workflow';
import type { CpuActivities, GpuActivities } from '../activities';
import type { TrainingOutcome } from '../activities/training';
import { gpuSlotActivityOptions } from './gpu-slot';

export interface TrainingWorkflowInput {
  jobId: string;
  /** The gpu task queue's name (config temporal.gpuTaskQueue). */
  gpuTaskQueue: string;
  /** How soon a job whose worker died is retried, and how soon a cancel is heard (config training.heartbeatTimeoutSeconds). */
  heartbeatTimeoutSeconds: number;
  /** Set for a job parked for the cloud (`queued-cloud`): it trains on that session instead of the local slot. */
  cloudSessionId: string | null;
}

const bookkeeping = proxyActivities<CpuActivities>({
  startToCloseTimeout: '5 minutes',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['TrainingRefused', 'JobNotFound'] },
});

/** The failures no retry mends, by the ApplicationFailure types the training activities throw (asFailure). */
const NON_RETRYABLE = ['TrainingRefused', 'JobNotFound', 'ExternalTrainerFailed'];

/**
 * TrainingWorkflow (`training-<job_id>`): the job's dataset and parent are checked on the cpu
 * queue, then the training itself is one heartbeating activity on the `gpu` queue, so it waits for
 * the single slot and never runs beside an auto-label session or an inference run. A worker that
 * dies stops heartbeating; the retry resumes after the last checkpoint. Cancelling the workflow
 * waits until the activity has stopped and freed the slot, then marks the job cancelled. A cloud
 * job trains on its cloud session and its file is registered the same way.
 */
export async function trainingWorkflow(input: TrainingWorkflowInput): Promise<TrainingOutcome> {
  const { trainModel } = proxyActivities<GpuActivities>({
    ...gpuSlotActivityOptions(input, NON_RETRYABLE),
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
  });
  const { runCloudTraining } = proxyActivities<CpuActivities>({
    startToCloseTimeout: '24 hours',
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: { maximumAttempts: 3, nonRetryableErrorTypes: NON_RETRYABLE },
  });
  try {
    await bookkeeping.prepareTrainingJob({ jobId: input.jobId });
    if (input.cloudSessionId === null) return await trainModel({ jobId: input.jobId });
    const result = await runCloudTraining({ jobId: input.jobId, cloudSessionId: input.cloudSessionId });
    return await bookkeeping.registerCloudModel({ jobId: input.jobId, result });
  } catch (err) {
    const cancelled = isCancellation(err);
    const failure = err as Error & { cause?: Error };
    await CancellationScope.nonCancellable(() =>
      bookkeeping.settleTrainingJob({
        jobId: input.jobId,
        status: cancelled ? 'cancelled' : 'failed',
        error: cancelled ? 'cancelled' : (failure.cause?.message ?? failure.message ?? String(err)),
      }),
    );
    throw err;
  }
}

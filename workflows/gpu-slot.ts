import type { ActivityOptions } from '@temporalio/workflow';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';

/**
 * Activity options of a heartbeating activity on the `gpu` queue that waits for its single slot
 * (an auto-label session, an inference run): waiting for the slot is not running, so only
 * start-to-close and heartbeats bound the work; a worker that dies stops heartbeating and the
 * retry resumes after the last committed frame. `nonRetryable`: the failures no retry mends.
 */
export function gpuSlotActivityOptions(
  input: { gpuTaskQueue: string; heartbeatTimeoutSeconds: number },
  nonRetryable: string[],
): ActivityOptions {
  return {
    ...WAIT_FOR_STEP_ON_CANCEL,
    taskQueue: input.gpuTaskQueue,
    startToCloseTimeout: '12 hours',
    heartbeatTimeout: `${input.heartbeatTimeoutSeconds} seconds`,
    retry: {
      initialInterval: '1 second',
      maximumInterval: '30 seconds',
      maximumAttempts: 5,
      nonRetryableErrorTypes: nonRetryable,
    },
  };
}

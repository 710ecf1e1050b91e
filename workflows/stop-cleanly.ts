import { ActivityCancellationType } from '@temporalio/workflow';

/**
 * Activity options of a job's steps (docs/jobs.md): when the job is cancelled, the workflow waits
 * until the running step has ended — finished, or stopped where the step listens for the cancel —
 * instead of going on at once. So a failure report that cleans up (removing an ingest's frames)
 * never runs while a step still writes, and the workflow closes only when nothing of the job runs.
 */
export const WAIT_FOR_STEP_ON_CANCEL = {
  cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
} as const;

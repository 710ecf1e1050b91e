import { getExternalWorkflowHandle, proxyActivities } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { JobCancelInput, JobCancelOutcome, WorkflowEnd } from '../activities/jobs/cancel';

const steps = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

/** Each wait is bounded, so a job whose current step runs for hours holds no activity slot meanwhile. */
const WAIT_SECONDS = 60;
const watch = proxyActivities<CpuActivities>({
  startToCloseTimeout: `${WAIT_SECONDS * 2} seconds`,
  heartbeatTimeout: '15 seconds',
  retry: { maximumAttempts: 10 },
});

/**
 * JobCancelWorkflow (`job-cancel-<kind>-<job_id>`, docs/jobs.md): asks the job's workflow to
 * cancel, waits until it has closed — its running step finished or stopped, its failure report
 * written — and only then ends the job as cancelled and emits `job.cancelled`, so nothing of the
 * job still writes once it reads cancelled. A job whose workflow is gone is ended at once.
 */
export async function jobCancelWorkflow(input: JobCancelInput): Promise<JobCancelOutcome> {
  let closedAs: WorkflowEnd | null = 'NOT_FOUND';
  if (input.workflowId) {
    try {
      await getExternalWorkflowHandle(input.workflowId).cancel();
    } catch {
      // Not running (closed, or never started): there is nothing to stop, only to settle.
    }
    closedAs = null;
    while (closedAs === null)
      closedAs = await watch.awaitJobWorkflowEnd({ workflowId: input.workflowId, waitSeconds: WAIT_SECONDS });
  }
  return steps.settleCancelledJob({ ...input, closedAs });
}

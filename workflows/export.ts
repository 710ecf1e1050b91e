import { proxyActivities } from '@temporalio/workflow';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities } from '../activities';
import type { ExportOutcome, ExportWorkflowInput } from '../activities/export';

const notice = proxyActivities<CpuActivities>({ startToCloseTimeout: '1 minute' });
const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 hour',
  retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['ExportRefused'] },
});

/**
 * ExportWorkflow (`export-<job_id>`, docs/datasets.md): gate, pages, commit. A run that gives up
 * leaves the job `failed` with its cursor, and `POST /api/exports/{job_id}/resume` starts the
 * workflow again under the same id, continuing after the last page written.
 */
export async function exportWorkflow(input: ExportWorkflowInput): Promise<ExportOutcome> {
  const pages = proxyActivities<CpuActivities>({
    ...WAIT_FOR_STEP_ON_CANCEL,
    // One activity writes every page; the heartbeat and the job row carry the cursor, so a worker
    // killed mid-export is noticed within the heartbeat timeout and the retry continues after the
    // last page it recorded, without writing any page twice.
    startToCloseTimeout: '12 hours',
    heartbeatTimeout: input.heartbeatTimeoutSeconds * 1000,
    retry: { maximumAttempts: 5, nonRetryableErrorTypes: ['ExportRefused'] },
  });
  return reportingFailure(
    async () => {
      const begun = await steps.beginExport(input);
      if (begun.refused) return { job_id: input.jobId, state: 'refused', commit_id: null, gate: begun.gate };
      await pages.writeExportPages(input);
      return steps.finishExport(input);
    },
    (error) => notice.failExport({ jobId: input.jobId, error }),
  );
}

import { ApplicationFailure, executeChild, proxyActivities, rootCause } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { ErrorRunSummary } from '../activities/errordetect/runs';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import { inferenceRunWorkflow } from './inference-run';

export interface ErrorDetectWorkflowInput {
  errorRunId: string;
  /** The gpu task queue's name (config temporal.gpuTaskQueue), for the prediction run. */
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['ErrorDetectRefused'] },
});

/** Detection reads the scope and writes its candidates in one transaction: minutes for the largest scope. */
const detection = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['ErrorDetectRefused'] },
});

/**
 * ErrorDetectWorkflow (`errordetect-<error_run_id>`, docs/quality-errordetect.md). Without a named
 * inference run, the predictions come first from the prediction plane itself: a GPU run is queued
 * and run as a child InferenceRunWorkflow (`inference-run-<run_id>`), so it takes the one GPU slot,
 * heartbeats, resumes and reports its own failure exactly as a run started by
 * POST /api/inference-runs, and stays an ordinary, reusable run afterwards. Then one cpu activity
 * finds the candidates and stores them. Status: queued → predicting (only when predicting) →
 * detecting → completed, or failed with the reason.
 */
export async function errorDetectWorkflow(input: ErrorDetectWorkflowInput): Promise<ErrorRunSummary> {
  return reportingFailure(
    async () => {
      const prepared = await steps.prepareErrorRun({ errorRunId: input.errorRunId });
      if (prepared.predict) {
        try {
          await executeChild(inferenceRunWorkflow, {
            workflowId: prepared.childWorkflowId,
            args: [
              {
                runId: prepared.runId,
                workflowId: prepared.childWorkflowId,
                gpuTaskQueue: input.gpuTaskQueue,
                heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds,
              },
            ],
          });
        } catch (err) {
          throw ApplicationFailure.nonRetryable(
            `the prediction run ${prepared.runId} failed: ${rootCause(err) ?? String(err)}`,
            'PredictionRunFailed',
          );
        }
      }
      return detection.detectErrors({ errorRunId: input.errorRunId });
    },
    (error) => steps.failErrorRun({ errorRunId: input.errorRunId, error }),
  );
}

import { WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { continueAsNew, executeChild, proxyActivities, rootCause } from '@temporalio/workflow';
import { autoLabelWorkflow } from './autolabel';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities } from '../activities';
import type { SessionOutcome } from '../activities/agent-runs/redetect-corpus';

export interface RedetectCorpusWorkflowInput {
  runId: string;
  /** The session the previous page ended with; null on the first run. */
  after: string | null;
  /** Sessions per workflow run (config autolabel.corpusPageSize). */
  pageSize: number;
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

export const REDETECT_CORPUS_WORKFLOW_ID = 'redetect-all';

/**
 * A redetect-all corpus run (`redetect-all`, one at a time), recorded as an AgentRun: walks the
 * sessions page by page and redetects each as a child AutoLabelWorkflow (`autolabel-<session_id>`,
 * so on the GPU slot and never beside a running auto-label of the same session). A session that
 * fails or cannot start is recorded and the walk goes on. After each page the workflow continues
 * as new from its cursor, so its history stays bounded however large the corpus.
 */
export async function redetectCorpusWorkflow(input: RedetectCorpusWorkflowInput): Promise<void> {
  const next = await reportingFailure(
    async () => {
      const page = await steps.nextRedetectSessions({
        runId: input.runId,
        after: input.after,
        pageSize: input.pageSize,
      });
      for (const sessionId of page) {
        const prepared = await steps.prepareRedetectSession({ runId: input.runId, sessionId });
        if ('skipped' in prepared) continue;
        let outcome: SessionOutcome;
        try {
          await executeChild(autoLabelWorkflow, {
            workflowId: `autolabel-${sessionId}`,
            args: [
              {
                jobId: prepared.jobId,
                sessionId,
                gpuTaskQueue: input.gpuTaskQueue,
                heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds,
              },
            ],
          });
          outcome = { outcome: 'completed' };
        } catch (err) {
          outcome =
            err instanceof WorkflowExecutionAlreadyStartedError
              ? { outcome: 'skipped', reason: 'an auto-label of this session was already running' }
              : { outcome: 'failed', reason: rootCause(err) ?? String(err) };
        }
        await steps.recordRedetectSession({
          runId: input.runId,
          sessionId,
          jobId: prepared.jobId,
          ...outcome,
        });
      }
      if (page.length === input.pageSize) return page.at(-1)!;
      await steps.finishAgentRun({ runId: input.runId, status: 'completed' });
      return null;
    },
    (error) => steps.finishAgentRun({ runId: input.runId, status: 'failed', error }),
  );
  if (next !== null) await continueAsNew<typeof redetectCorpusWorkflow>({ ...input, after: next });
}

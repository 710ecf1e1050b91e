import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import { gpuSlotActivityOptions } from './gpu-slot';
import { reportingFailure } from './failure';
import { walkFramePage } from './page-walk';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities, GpuActivities } from '../activities';
import { addRecallTally, type RecallTally } from '../core/recall/tally';

export interface RecallWorkflowInput {
  runId: string;
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
  pageFrames: number;
  /** The frame the previous page ended with; null on the first run. */
  after: string | null;
  tally: RecallTally;
}

/** One recall run per session at a time. */
export const recallWorkflowId = (sessionId: string): string => `recall-${sessionId}`;

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

/**
 * A recall run recorded as an AgentRun (docs/recall.md): the sensitive detector pass over a
 * session's frames, page by page on the GPU slot, queueing what no object covers for review. After
 * each page the workflow continues as new from its cursor, so its history stays bounded.
 */
export async function recallWorkflow(input: RecallWorkflowInput): Promise<RecallTally> {
  const { runRecallFrames } = proxyActivities<GpuActivities>(
    gpuSlotActivityOptions(input, ['UnavailableError', 'NotFoundError']),
  );
  let tally = input.tally;
  const next = await reportingFailure(
    async () => {
      const walked = await walkFramePage(
        { ...input, limit: null },
        {
          walked: (t) => t.frames_checked,
          next: (after, take) => steps.nextRecallFrames({ runId: input.runId, after, take }),
          run: (frameIds) => runRecallFrames({ runId: input.runId, frameIds }),
          add: addRecallTally,
        },
      );
      tally = walked.tally;
      if (walked.next === null)
        await steps.finishRecallRun({ runId: input.runId, status: 'completed', tally });
      return walked.next;
    },
    (error) => steps.finishRecallRun({ runId: input.runId, status: 'failed', error, tally }),
  );
  if (next !== null) await continueAsNew<typeof recallWorkflow>({ ...input, after: next, tally });
  return tally;
}

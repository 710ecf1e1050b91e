import { continueAsNew, proxyActivities } from '@temporalio/workflow';
import { gpuSlotActivityOptions } from './gpu-slot';
import { walkFramePage } from './page-walk';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities, GpuActivities } from '../activities';
import { addRelabelTally, emptyRelabelTally, type RelabelTally } from '../core/relabel/decide';

export interface RelabelCorpusWorkflowInput {
  runId: string;
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
  pageFrames: number;
  /** Frames at most; null: every frame with a machine-made object. */
  limit: number | null;
  /** The frame the previous page ended with; null on the first run. */
  after: string | null;
  tally: RelabelTally;
}

/** One corpus relabel at a time: two would interleave on the same objects and neither could be reverted alone. */
export const RELABEL_CORPUS_WORKFLOW_ID = 'relabel-corpus';
export const relabelImportWorkflowId = (runId: string): string => `relabel-import-${runId}`;

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10 },
});

/**
 * A corpus relabel recorded as an AgentRun (docs/relabel.md): the closed-set detector reclassifies
 * the machine-made boxes of the corpus, page by page of frames on the GPU slot, and every move
 * goes to review. After each page the workflow continues as new from its cursor, so its history
 * stays bounded whatever the corpus size; a frame that fails is counted and the walk goes on.
 */
export async function relabelCorpusWorkflow(input: RelabelCorpusWorkflowInput): Promise<RelabelTally> {
  const { runRelabelFrames } = proxyActivities<GpuActivities>(
    gpuSlotActivityOptions(input, ['UnavailableError', 'NotFoundError']),
  );
  let tally = input.tally;
  const next = await reportingFailure(
    async () => {
      const walked = await walkFramePage(input, {
        walked: (t) => t.frames_checked,
        next: (after, take) => steps.nextRelabelFrames({ runId: input.runId, after, take }),
        run: (frameIds) => runRelabelFrames({ runId: input.runId, frameIds }),
        add: addRelabelTally,
      });
      tally = walked.tally;
      if (walked.next === null)
        await steps.finishRelabelRun({ runId: input.runId, status: 'completed', tally });
      return walked.next;
    },
    (error) => steps.finishRelabelRun({ runId: input.runId, status: 'failed', error, tally }),
  );
  if (next !== null) await continueAsNew<typeof relabelCorpusWorkflow>({ ...input, after: next, tally });
  return tally;
}

const importing = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '30 minutes',
  heartbeatTimeout: '2 minutes',
  retry: { maximumAttempts: 5 },
});

/** An imported relabel (`relabel-import-<run_id>`): database work on the `cpu` queue, then the run's end. */
export async function relabelImportWorkflow(input: { runId: string }): Promise<void> {
  await reportingFailure(
    async () => {
      const tally = await importing.applyRelabelImport(input);
      await steps.finishRelabelRun({ runId: input.runId, status: 'completed', tally });
    },
    (error) =>
      steps.finishRelabelRun({ runId: input.runId, status: 'failed', error, tally: emptyRelabelTally() }),
  );
}

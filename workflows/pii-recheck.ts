import { continueAsNew, executeChild, proxyActivities } from '@temporalio/workflow';
import { gpuSlotActivityOptions } from './gpu-slot';
import { reportingFailure } from './failure';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';
import type { CpuActivities } from '../activities';
import { addTally, emptyPiiTally, type PiiRunTally } from '../core/pii-recheck/tally';

export interface PiiRunWorkflowInput {
  runId: string;
  /** The task queue of the page step: the GPU slot for a re-check, `cpu` for a backfill. */
  taskQueue: string;
  heartbeatTimeoutSeconds: number;
  pageFrames: number;
  /** Frames at most; null: every frame that qualifies. */
  limit: number | null;
  /** The frame the previous page ended with; null on the first run. */
  after: string | null;
  tally: PiiRunTally;
}

export const PII_RECHECK_WORKFLOW_ID = 'pii-recheck-all';
export const PII_BACKFILL_WORKFLOW_ID = 'pii-backfill';

/**
 * A PII corpus run recorded as an AgentRun (docs/pii-recheck.md): the crop-and-upscale re-check
 * (`pii-recheck-all`) or the backfill of the normal pass (`pii-backfill`), one of each at a time.
 * Walks the frames a page at a time by frame id and continues as new after each page, so its
 * history stays bounded whatever the corpus size; a frame that fails is counted and the walk goes
 * on. The frames and bookkeeping steps run on the run's queue (the page step holds the GPU slot for
 * a re-check, so it never runs beside auto-label or training).
 */
export async function piiRunWorkflow(input: PiiRunWorkflowInput): Promise<PiiRunTally> {
  const { runPiiFrames } = proxyActivities<CpuActivities>(
    gpuSlotActivityOptions(
      { gpuTaskQueue: input.taskQueue, heartbeatTimeoutSeconds: input.heartbeatTimeoutSeconds },
      ['UnavailableError', 'NotFoundError'],
    ),
  );
  const steps = proxyActivities<CpuActivities>({
    ...WAIT_FOR_STEP_ON_CANCEL,
    taskQueue: input.taskQueue,
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 10 },
  });
  let tally = input.tally;
  const next = await reportingFailure(
    async () => {
      const room =
        input.limit === null ? input.pageFrames : Math.min(input.pageFrames, input.limit - tally.checked);
      const page =
        room > 0 ? await steps.nextPiiFrames({ runId: input.runId, after: input.after, take: room }) : [];
      if (page.length > 0) {
        const done = await runPiiFrames({ runId: input.runId, frameIds: page });
        tally = addTally(tally, done);
      }
      if (page.length === room && room > 0) return page.at(-1)!;
      await steps.finishPiiRun({ runId: input.runId, status: 'completed', tally });
      return null;
    },
    (error) => steps.finishPiiRun({ runId: input.runId, status: 'failed', error, tally }),
  );
  if (next !== null) await continueAsNew<typeof piiRunWorkflow>({ ...input, after: next, tally });
  return tally;
}

export const CLEANUP_SWEEP_WORKFLOW_ID = 'cleanup-sweep';

export interface CleanupSweepWorkflowInput {
  governanceRunId: string;
  /** The PII backfill run of the sweep (do_pii), already recorded; null without do_pii. */
  pii: Omit<PiiRunWorkflowInput, 'after' | 'tally'> | null;
}

/**
 * The cleanup sweep (`cleanup-sweep`, one at a time), a governance run: with do_pii the normal
 * PII pass on up to pii_limit frames lacking an audit (a child pii-backfill run, revertible and
 * listed like any), then the orphaned blobs of the frames and redacted buckets go.
 */
export async function cleanupSweepWorkflow(input: CleanupSweepWorkflowInput): Promise<void> {
  const steps = proxyActivities<CpuActivities>({
    startToCloseTimeout: '1 minute',
    retry: { maximumAttempts: 10 },
  });
  const { removeOrphanBlobs } = proxyActivities<CpuActivities>({
    startToCloseTimeout: '2 hours',
    retry: { maximumAttempts: 5 },
  });
  const result = {
    pii_run_id: input.pii?.runId ?? null,
    orphans: [] as Awaited<ReturnType<typeof removeOrphanBlobs>>,
  };
  await reportingFailure(
    async () => {
      if (input.pii)
        await executeChild(piiRunWorkflow, {
          workflowId: `${CLEANUP_SWEEP_WORKFLOW_ID}-pii-${input.governanceRunId}`,
          args: [{ ...input.pii, after: null, tally: emptyPiiTally() }],
        });
      result.orphans = await removeOrphanBlobs();
      await steps.finishCleanupSweep({ governanceRunId: input.governanceRunId, status: 'completed', result });
    },
    (error) =>
      steps.finishCleanupSweep({ governanceRunId: input.governanceRunId, status: 'failed', result, error }),
  );
}

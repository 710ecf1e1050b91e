import {
  CancellationScope,
  executeChild,
  isCancellation,
  proxyActivities,
  sleep,
} from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import { STAGES_OF, type FlywheelKind, type FlywheelStage } from '../core/flywheel/stages';
import { autoLabelWorkflow } from './autolabel';
import { exportAsChild, trainingAsChild } from './challenger';
import { promotionWorkflow } from './promotion';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';

export interface FlywheelWorkflowInput {
  runId: string;
  kind: FlywheelKind;
  /** The session of a `session` run; null for a training cycle. */
  sessionId: string | null;
  gpuTaskQueue: string;
  /** Heartbeat timeouts of the children: auto-label and gold runs, training jobs, exports. */
  gpuHeartbeatSeconds: number;
  trainingHeartbeatSeconds: number;
  exportHeartbeatSeconds: number;
  /** How often a session still being ingested, or still in review (wait_for_review), is looked at again. */
  pollSeconds: number;
  waitForReview: boolean;
}

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['FlywheelRefused'] },
});

/**
 * FlywheelWorkflow (docs/flywheel.md): one session through ingest → auto-label → review → export →
 * train → gate (`flywheel-session-<session_id>`), or a training cycle's export → train → gate
 * (`training-cycle-<run_id>`), as the parent of the platform's own workflows: the auto-label, the
 * export, the training job and the promotion gate run as its children, each under its usual id, so
 * each keeps its own history, heartbeats and resume. Its own steps only record the stages and wait.
 * Cancelling it (POST /api/jobs/flywheel/{id}/cancel, the kill switch) cancels the child running.
 */
export async function flywheelWorkflow(input: FlywheelWorkflowInput) {
  const { runId } = input;
  const stage = async (name: FlywheelStage, work: () => Promise<Record<string, unknown> | 'skipped'>) => {
    await steps.enterFlywheelStage({ runId, stage: name });
    const detail = await work();
    await steps.finishFlywheelStage(
      detail === 'skipped'
        ? { runId, stage: name, state: 'skipped', detail: {} }
        : { runId, stage: name, state: 'done', detail },
    );
  };

  const gpu = { gpuTaskQueue: input.gpuTaskQueue, heartbeatTimeoutSeconds: input.gpuHeartbeatSeconds };
  let commitId = '';
  let model = { modelVersion: '', parentVersion: '' };
  let gate: Awaited<ReturnType<typeof promotionWorkflow>> | null = null;
  const work: Record<FlywheelStage, () => Promise<Record<string, unknown> | 'skipped'>> = {
    ingest: async () => {
      for (;;) {
        const state = await steps.flywheelIngestState({ runId });
        if (state.ready) return state.detail;
        await sleep(`${input.pollSeconds} seconds`);
      }
    },
    autolabel: async () => {
      const job = await steps.prepareFlywheelAutolabel({ runId });
      if (job.reused) return { job_id: job.jobId, reused: true };
      await executeChild(autoLabelWorkflow, {
        workflowId: job.workflowId,
        args: [{ jobId: job.jobId, sessionId: input.sessionId!, ...gpu }],
      });
      return { ...(await steps.flywheelAutolabelResult({ jobId: job.jobId })), reused: false };
    },
    review: async () => {
      for (;;) {
        const review = await steps.flywheelReviewState({ runId });
        if (!input.waitForReview || review.in_review === 0)
          return { ...review, waited_for_review: input.waitForReview };
        await sleep(`${input.pollSeconds} seconds`);
      }
    },
    export: async () => {
      const job = await steps.prepareFlywheelExport({ runId });
      await exportAsChild(job, input.exportHeartbeatSeconds);
      commitId = await steps.flywheelExportedCommit({ runId, jobId: job.jobId });
      return { export_job_id: job.jobId, commit_id: commitId };
    },
    train: async () => {
      const job = await steps.prepareFlywheelTraining({ runId, commitId });
      await trainingAsChild(job, {
        gpuTaskQueue: input.gpuTaskQueue,
        heartbeatTimeoutSeconds: input.trainingHeartbeatSeconds,
      });
      model = await steps.flywheelTrainedModel({ runId, jobId: job.jobId });
      return {
        training_job_id: job.jobId,
        model_version: model.modelVersion,
        parent_version: model.parentVersion,
      };
    },
    gate: async () => {
      const request = await steps.planFlywheelGate({ runId, modelVersion: model.modelVersion });
      gate = await executeChild(promotionWorkflow, {
        workflowId: `promotion-${model.modelVersion}`,
        args: [{ request, ...gpu }],
      });
      return { promotion_id: gate.promotion_id, outcome: gate.outcome, rule: gate.rule };
    },
  };

  try {
    for (const name of STAGES_OF[input.kind]) await stage(name, work[name]);
  } catch (err) {
    const cancelled = isCancellation(err);
    const failure = err as Error & { cause?: Error };
    await CancellationScope.nonCancellable(() =>
      steps.finishFlywheelRun(
        cancelled
          ? { runId, status: 'cancelled', error: 'cancelled' }
          : { runId, status: 'failed', error: failure.cause?.message ?? failure.message ?? String(err) },
      ),
    );
    throw err;
  }
  await steps.finishFlywheelRun({
    runId,
    status: 'completed',
    gate: { promotion_id: gate!.promotion_id, outcome: gate!.outcome, rule: gate!.rule },
  });
  return { run_id: runId, gate };
}

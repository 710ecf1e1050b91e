import {
  condition,
  continueAsNew,
  defineSignal,
  executeChild,
  proxyActivities,
  setHandler,
} from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { CampaignStage, StopReason } from '../core/campaigns/plan';
import { exportAsChild, trainingAsChild } from './challenger';
import { reportingFailure } from './failure';
import { inferenceRunWorkflow } from './inference-run';
import { WAIT_FOR_STEP_ON_CANCEL } from './stop-cleanly';

export interface CampaignWorkflowInput {
  campaignId: string;
  /** The iteration this run of the workflow carries out (one per run: it continues as new after each). */
  iteration: number;
  gpuTaskQueue: string;
  /** Heartbeat timeouts of the children: inference runs, training jobs and exports. */
  inferenceHeartbeatSeconds: number;
  trainingHeartbeatSeconds: number;
  exportHeartbeatSeconds: number;
  /** How often a batch in review is checked without a signal, and how often its reviewers are reminded. */
  reviewPollSeconds: number;
  reminderHours: number;
}

export const campaignWorkflowId = (campaignId: string): string => `campaign-${campaignId}`;

/** A person approved the stage the campaign waits at (the approve route has written any autopilot stages first). */
export const approveCampaignSignal = defineSignal('approve');
/** Stop at the next safe point: a wait ends at once, a running export, training or evaluation first finishes. */
export const stopCampaignSignal = defineSignal('stop');
/** Look again now: a review was recorded on the batch, or a person asked (POST …/tick). */
export const tickCampaignSignal = defineSignal('tick');

const steps = proxyActivities<CpuActivities>({
  ...WAIT_FOR_STEP_ON_CANCEL,
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['CampaignRefused'] },
});

/**
 * An active-learning campaign (`campaign-<id>`, docs/campaigns.md), one iteration per workflow run:
 * select a batch of the campaign's class by active learning and route it to review → wait until
 * reviewers have decided it (a signal from the review routes, a periodic check, reminders) →
 * export the accepted labels as a commit → train a challenger on it → run it on the campaign's
 * gold set and measure the target metric for the class → stop at the target, after
 * max_iterations, or when patience runs out; else continue as new with the next iteration, so the
 * history stays bounded however long the campaign runs. With require_approval the stages listed
 * in core/campaigns/plan.ts wait for `approve` unless they are autopilot stages. The export,
 * training and inference run are the platform's own workflows, run as children.
 */
export async function campaignWorkflow(input: CampaignWorkflowInput): Promise<StopReason> {
  const { campaignId } = input;
  let approved = false;
  let stopRequested = false;
  let ticked = false;
  setHandler(approveCampaignSignal, () => void (approved = true));
  setHandler(stopCampaignSignal, () => void (stopRequested = true));
  setHandler(tickCampaignSignal, () => void (ticked = true));

  /** Waits for approval when the stage needs it; false when a stop came instead. */
  const approvedFor = async (stage: CampaignStage): Promise<boolean> => {
    if (!(await steps.campaignNeedsApproval({ campaignId, stage }))) return !stopRequested;
    await steps.enterCampaignStage({ campaignId, stage: 'approval' });
    approved = false;
    await condition(() => approved || stopRequested);
    return !stopRequested;
  };

  const outcome = await reportingFailure(
    async (): Promise<StopReason | null> => {
      if (input.iteration > 1 && !(await approvedFor('select'))) return 'stopped';
      await steps.enterCampaignStage({ campaignId, stage: 'select' });
      const batch = await steps.selectCampaignBatch({ campaignId });
      if ('ended' in batch) return batch.ended;

      let reminders = 0;
      let remindedAt = Date.now();
      for (;;) {
        if ((await steps.campaignBatchProgress({ campaignId })).complete) break;
        ticked = false;
        await condition(() => ticked || stopRequested, `${input.reviewPollSeconds} seconds`);
        if (stopRequested) return 'stopped';
        if (Date.now() - remindedAt >= input.reminderHours * 3_600_000) {
          await steps.remindCampaignReview({ campaignId, reminder: ++reminders });
          remindedAt = Date.now();
        }
      }

      await steps.enterCampaignStage({ campaignId, stage: 'export' });
      const exported = await steps.prepareCampaignExport({ campaignId });
      await exportAsChild(exported, input.exportHeartbeatSeconds);
      const commitId = await steps.exportedCommit({ jobId: exported.jobId });
      if (!(await approvedFor('train'))) return 'stopped';
      await steps.enterCampaignStage({ campaignId, stage: 'train' });
      const training = await steps.prepareCampaignTraining({ campaignId, commitId });
      await trainingAsChild(training, {
        gpuTaskQueue: input.gpuTaskQueue,
        heartbeatTimeoutSeconds: input.trainingHeartbeatSeconds,
      });
      const trained = await steps.trainedModel({ jobId: training.jobId });
      if (stopRequested) return 'stopped';

      await steps.enterCampaignStage({ campaignId, stage: 'evaluate' });
      const runs = await steps.planCampaignEvaluation({ campaignId, ...trained });
      for (const run of [runs.challenger, runs.parent])
        if (run.workflowId)
          await executeChild(inferenceRunWorkflow, {
            workflowId: run.workflowId,
            args: [
              {
                runId: run.runId,
                workflowId: run.workflowId,
                gpuTaskQueue: input.gpuTaskQueue,
                heartbeatTimeoutSeconds: input.inferenceHeartbeatSeconds,
              },
            ],
          });
      const { stop } = await steps.evaluateCampaignIteration({
        campaignId,
        runId: runs.challenger.runId,
        parentRunId: runs.parent.runId,
        exportJobId: exported.jobId,
        commitId,
        trainingJobId: training.jobId,
        ...trained,
      });
      return stop;
    },
    (error) => steps.finishCampaign({ campaignId, status: 'failed', reason: 'failed', error }),
  );
  if (outcome !== null) {
    await steps.finishCampaign({
      campaignId,
      status: outcome === 'stopped' ? 'stopped' : 'completed',
      reason: outcome,
    });
    return outcome;
  }
  await steps.nextCampaignIteration({ campaignId, iteration: input.iteration + 1 });
  return continueAsNew<typeof campaignWorkflow>({ ...input, iteration: input.iteration + 1 });
}

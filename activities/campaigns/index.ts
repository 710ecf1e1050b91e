import {
  afterEvaluation,
  batchBudget,
  CAMPAIGN_METRICS,
  needsApproval,
  type CampaignMetric,
  type CampaignSettings,
  type CampaignStage,
  type StopReason,
} from '../../core/campaigns/plan';
import { DEFAULT_WEIGHTS } from '../../core/activelearn/score';
import { DEFAULT_EMBEDDING_MODEL } from '../../core/curation/embedding';
import { RefusedError } from '../../core/errors';
import { onceEventId } from '../../core/events/notify';
import type { Campaign, Prisma } from '../../generated/prisma/client';
import { batchProgress } from '../activelearn/loop';
import { selectBatch } from '../activelearn/select';
import { recordAudit } from '../audit';
import { refusedAs } from '../refusal';
import type { ActivityDeps } from '../deps';
import { emitEvent } from '../events/emit';
import { classNames, evaluateRunOnGold, safetyClasses } from '../registry/evaluation';
import { runOnGold, type GoldRun } from '../registry/runs';
import {
  exportedCommit,
  queueChallengerTraining,
  queueTrainingExport,
  trainedModel,
  type QueuedChild,
} from '../training/challenger';

/** A batch never takes more frames than one selection may pick (activelearn's SELECT_MAX_BUDGET). */
export const CAMPAIGN_MAX_BATCH = 500;

/** A model's per-class figures on gold, at IoU 0.5 (recall, precision, AP .50:.95, AP50, AR100). */
export type CampaignMeasures = Record<CampaignMetric, number | null>;

/** What one finished iteration did, kept on the campaign (`iterations`). */
export interface CampaignIteration {
  iteration: number;
  batch_id: string;
  frames: number;
  export_job_id: string | null;
  commit_id: string | null;
  training_job_id: string | null;
  model_version: string | null;
  run_id: string | null;
  /** The challenger's figures for the class on gold. */
  measured: CampaignMeasures;
  /** Its parent (the champion it fine-tuned) on the same gold set: the baseline it must beat. */
  parent_version: string;
  parent_run_id: string;
  parent_measured: CampaignMeasures;
  /** `measured[target_metric]`. */
  value: number | null;
  best_value: number | null;
  stop: StopReason | null;
  finished_at: string;
}

export const settingsOf = (c: Campaign): CampaignSettings => ({
  labelBudget: c.labelBudget,
  maxIterations: c.maxIterations,
  patience: c.patience,
  targetValue: c.targetValue,
  requireApproval: c.requireApproval,
  autopilotStages: c.autopilotStages,
});

/** A campaign as the routes, the stream and the workflow's steps show it. */
export const campaignOut = (c: Campaign) => ({
  campaign_id: c.id,
  name: c.name,
  class_name: c.className,
  task_type: c.taskType,
  target_metric: c.targetMetric,
  target_value: c.targetValue,
  label_budget: c.labelBudget,
  max_iterations: c.maxIterations,
  patience: c.patience,
  require_approval: c.requireApproval,
  autopilot_stages: c.autopilotStages,
  notes: c.notes,
  gold_id: c.goldId,
  status: c.status,
  stage: c.stage,
  iteration: c.iteration,
  labels_used: c.labelsUsed,
  best_value: c.bestValue,
  stale_iterations: c.staleIterations,
  batch_id: c.batchId,
  stop_reason: c.stopReason,
  error: c.error,
  iterations: c.iterations as unknown as CampaignIteration[],
  workflow_id: c.workflowId,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
  updated_at: c.updatedAt.toISOString(),
  finished_at: c.finishedAt?.toISOString() ?? null,
});

const refusal = refusedAs('CampaignRefused');

/**
 * The steps of a campaign's workflow (docs/campaigns.md), on the `cpu` queue. Each is written to be
 * retried: a step keyed by the iteration finds what an earlier attempt did.
 */
export function createCampaignActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  const load = (campaignId: string) => db.campaign.findUniqueOrThrow({ where: { id: campaignId } });

  /** A state change: the row, the audit trail and the jobs stream (`campaign.<what>`). */
  async function changed(
    campaignId: string,
    what: string,
    data: Prisma.CampaignUpdateInput,
    detail: Record<string, unknown> = {},
  ) {
    const c = await db.campaign.update({ where: { id: campaignId }, data });
    await recordAudit(db, {
      actorId: null,
      action: `campaign.${what}`,
      subjectType: 'campaign',
      subjectId: c.id,
      detail: { iteration: c.iteration, stage: c.stage, ...detail } as Prisma.InputJsonValue,
    });
    await deps.events.publish('jobs', `campaign.${what}`, campaignOut(c));
    return c;
  }

  return {
    /** Whether the stage waits for approval, as the campaign's settings stand now (an approval may have added autopilot stages). */
    async campaignNeedsApproval(input: { campaignId: string; stage: CampaignStage }): Promise<boolean> {
      const c = await load(input.campaignId);
      return needsApproval(settingsOf(c), input.stage, c.iteration);
    },

    /** Moves the campaign to a stage (and says so on the stream); the stage names what it now waits for or does. */
    async enterCampaignStage(input: { campaignId: string; stage: CampaignStage | 'approval' }) {
      const c = await changed(input.campaignId, 'stage', { stage: input.stage });
      if (input.stage === 'approval')
        await emitEvent(db, {
          id: onceEventId('campaign.approval_needed', c.id, String(c.iteration)),
          kind: 'campaign.approval_needed',
          subjectType: 'campaign',
          subjectId: c.id,
          payload: { campaign_id: c.id, name: c.name, iteration: c.iteration, started_by: c.createdBy },
        });
    },

    /**
     * Picks this iteration's batch by active learning, scoped to the campaign's class, within the
     * budget left, and routes it to review. A retried step finds the batch it saved. The campaign
     * ends when the budget is spent or no candidate frame is left.
     */
    async selectCampaignBatch(input: {
      campaignId: string;
    }): Promise<{ batchId: string; frames: number } | { ended: 'budget_spent' | 'pool_exhausted' }> {
      const c = await load(input.campaignId);
      if (c.batchId) {
        const done = await db.activeLearnBatchFrame.count({ where: { batchId: c.batchId } });
        return { batchId: c.batchId, frames: done };
      }
      const budget = batchBudget(settingsOf(c), c, CAMPAIGN_MAX_BATCH);
      if (budget === 0) return { ended: 'budget_spent' };
      let saved;
      try {
        ({ saved } = await selectBatch(
          deps,
          {
            budget,
            classes: [c.className],
            weights: { ...DEFAULT_WEIGHTS },
            threshold: null,
            model: DEFAULT_EMBEDDING_MODEL,
            route_to_review: true,
          },
          { userId: c.createdBy ?? '', requestId: `campaign-${c.id}` },
        ));
      } catch (err) {
        if (err instanceof RefusedError) return { ended: 'pool_exhausted' };
        throw err;
      }
      const frames = saved.frames.length;
      await changed(
        c.id,
        'batch_selected',
        { batchId: saved.id, stage: 'review', labelsUsed: { increment: frames } },
        { batch_id: saved.id, frames, routed_objects: saved.routedObjects },
      );
      return { batchId: saved.id, frames };
    },

    /** How far review has got with the campaign's batch. */
    async campaignBatchProgress(input: { campaignId: string }) {
      const c = await load(input.campaignId);
      if (!c.batchId) return { frames: 0, decided: 0, complete: true };
      const p = await batchProgress(db, c.batchId);
      return { ...p, complete: p.decided >= p.frames };
    },

    /** A reminder that the batch waits on reviewers (the reviewer group and the campaign's starter are notified). */
    async remindCampaignReview(input: { campaignId: string; reminder: number }) {
      const c = await load(input.campaignId);
      const p = c.batchId ? await batchProgress(db, c.batchId) : { frames: 0, decided: 0 };
      await emitEvent(db, {
        id: onceEventId('campaign.review_reminder', c.id, String(c.iteration), String(input.reminder)),
        kind: 'campaign.review_reminder',
        subjectType: 'campaign',
        subjectId: c.id,
        payload: {
          campaign_id: c.id,
          name: c.name,
          iteration: c.iteration,
          batch_id: c.batchId,
          frames: p.frames,
          decided: p.decided,
          started_by: c.createdBy,
        },
      });
    },

    /** This iteration's export (activities/training/challenger.ts): the training data outside the gold set's sessions. */
    async prepareCampaignExport(input: { campaignId: string }): Promise<QueuedChild> {
      const c = await load(input.campaignId);
      const gold = await db.goldSet.findUniqueOrThrow({ where: { id: c.goldId } });
      return queueTrainingExport(deps, {
        name: `campaign-${c.id.slice(0, 8)}`,
        goldSessionIds: gold.sessionIds,
        actorId: c.createdBy,
      }).catch(refusal);
    },

    async exportedCommit(input: { jobId: string }): Promise<string> {
      return exportedCommit(db, input.jobId).catch(refusal);
    },

    /** The challenger's training job on the iteration's commit, gated on cost. */
    async prepareCampaignTraining(input: { campaignId: string; commitId: string }): Promise<QueuedChild> {
      const c = await load(input.campaignId);
      return queueChallengerTraining(deps, {
        commitId: input.commitId,
        name: `campaign ${c.name} iteration ${c.iteration}`,
        epochs: config.campaigns.trainingEpochs,
        actorId: c.createdBy,
      }).catch(refusal);
    },

    async trainedModel(input: { jobId: string }): Promise<{ modelVersion: string; parentVersion: string }> {
      return trainedModel(db, input.jobId).catch(refusal);
    },

    /**
     * The runs on the campaign's gold set of the challenger and of its parent (the champion it
     * fine-tuned, its baseline): each reused when one is completed, else queued for a child run.
     */
    async planCampaignEvaluation(input: {
      campaignId: string;
      modelVersion: string;
      parentVersion: string;
    }): Promise<{ challenger: GoldRun; parent: GoldRun }> {
      const c = await load(input.campaignId);
      const actor = { userId: c.createdBy ?? '', role: 'reviewer' as const, requestId: `campaign-${c.id}` };
      const on = (modelVersion: string) =>
        runOnGold(db, { modelVersion, goldId: c.goldId, field: 'campaign' }, actor);
      return { challenger: await on(input.modelVersion), parent: await on(input.parentVersion) };
    },

    /**
     * Measures the iteration's challenger and its parent on gold — the campaign's metric for its
     * class — and decides: the best value so far, the stale count, and whether the campaign stops.
     * The iteration is written once (a retried step finds it written and answers the same).
     */
    async evaluateCampaignIteration(input: {
      campaignId: string;
      runId: string;
      parentRunId: string;
      exportJobId: string;
      commitId: string;
      trainingJobId: string;
      modelVersion: string;
      parentVersion: string;
    }): Promise<{ value: number | null; stop: StopReason | null }> {
      const c = await load(input.campaignId);
      const done = (c.iterations as unknown as CampaignIteration[]).find((i) => i.iteration === c.iteration);
      if (done) return { value: done.value, stop: done.stop };
      const shared = { names: await classNames(db), safety: await safetyClasses(db, config) };
      const measure = async (runId: string) => {
        const run = await db.inferenceRun.findUniqueOrThrow({ where: { id: runId } });
        const { evaluation } = await evaluateRunOnGold(db, config, run, c.goldId, shared);
        const k = evaluation.result.classes.find((x) => x.class_id === c.classId);
        return Object.fromEntries(CAMPAIGN_METRICS.map((m) => [m, k?.[m] ?? null])) as CampaignMeasures;
      };
      const measured = await measure(input.runId);
      const parent = await measure(input.parentRunId);
      const value = measured[c.targetMetric as CampaignMetric];
      const decision = afterEvaluation(settingsOf(c), c, value);
      const entry: CampaignIteration = {
        iteration: c.iteration,
        batch_id: c.batchId!,
        frames: c.batchId ? await db.activeLearnBatchFrame.count({ where: { batchId: c.batchId } }) : 0,
        export_job_id: input.exportJobId,
        commit_id: input.commitId,
        training_job_id: input.trainingJobId,
        model_version: input.modelVersion,
        run_id: input.runId,
        measured,
        parent_version: input.parentVersion,
        parent_run_id: input.parentRunId,
        parent_measured: parent,
        value,
        best_value: decision.bestValue,
        stop: decision.stop,
        finished_at: new Date().toISOString(),
      };
      await changed(
        c.id,
        'evaluated',
        {
          bestValue: decision.bestValue,
          staleIterations: decision.staleIterations,
          iterations: [
            ...(c.iterations as unknown as CampaignIteration[]),
            entry,
          ] as unknown as Prisma.InputJsonValue,
        },
        { value, metric: c.targetMetric, class_name: c.className, stop: decision.stop },
      );
      return { value, stop: decision.stop };
    },

    /** The next iteration: a fresh batch to select. */
    async nextCampaignIteration(input: { campaignId: string; iteration: number }) {
      // Conditional on the iteration, so a retried step cannot skip one.
      await db.campaign.updateMany({
        where: { id: input.campaignId, iteration: input.iteration - 1 },
        data: { iteration: input.iteration, batchId: null, stage: 'select' },
      });
      const c = await load(input.campaignId);
      await deps.events.publish('jobs', 'campaign.iteration', campaignOut(c));
    },

    /** Ends the campaign: completed (a stop rule), stopped (by a person) or failed, with why. */
    async finishCampaign(input: {
      campaignId: string;
      status: 'completed' | 'stopped' | 'failed';
      reason: StopReason | 'failed';
      error?: string;
    }) {
      const c = await changed(
        input.campaignId,
        input.status,
        {
          status: input.status,
          stage: 'done',
          stopReason: input.reason,
          error: input.error ?? null,
          finishedAt: new Date(),
        },
        { reason: input.reason, error: input.error ?? null },
      );
      await emitEvent(db, {
        id: onceEventId('campaign.finished', c.id),
        kind: 'campaign.finished',
        subjectType: 'campaign',
        subjectId: c.id,
        payload: {
          campaign_id: c.id,
          name: c.name,
          status: c.status,
          reason: c.stopReason,
          iterations: c.iteration,
          best_value: c.bestValue,
          started_by: c.createdBy,
        },
      });
    },
  };
}

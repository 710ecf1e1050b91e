/**
 * The campaign loop's decisions (docs/campaigns.md), pure: what the next batch may take, which
 * stage waits for a person, and what an evaluated iteration means for the campaign.
 */

/** The stages of one iteration, in order. */
export const CAMPAIGN_STAGES = ['select', 'review', 'export', 'train', 'evaluate'] as const;
export type CampaignStage = (typeof CAMPAIGN_STAGES)[number];

/**
 * Stages that wait for `POST …/approve` when the campaign requires approval, unless listed in its
 * autopilot_stages: training (the GPU hours) and routing a batch to reviewers (their hours). The
 * first iteration's selection is approved by starting the campaign.
 */
export const APPROVABLE_STAGES: readonly CampaignStage[] = ['select', 'train'];

/** Metrics a campaign can target: the per-class figures of an evaluation on gold. */
export const CAMPAIGN_METRICS = ['recall', 'precision', 'ap', 'ap50', 'ar100'] as const;
export type CampaignMetric = (typeof CAMPAIGN_METRICS)[number];

/** An improvement smaller than this is no improvement: evaluation noise on a small gold set. */
export const MIN_IMPROVEMENT = 1e-3;

export interface CampaignSettings {
  labelBudget: number;
  maxIterations: number;
  patience: number;
  targetValue: number;
  requireApproval: boolean;
  autopilotStages: readonly string[];
}

export interface CampaignProgress {
  iteration: number;
  labelsUsed: number;
  bestValue: number | null;
  staleIterations: number;
}

export type StopReason =
  'target_reached' | 'max_iterations' | 'patience' | 'budget_spent' | 'pool_exhausted' | 'stopped';

/**
 * Frames the next batch may take: the remaining budget spread over the remaining iterations
 * (rounded up, so the budget is spent by the last one), at most `maxBatch`.
 */
export function batchBudget(c: CampaignSettings, p: CampaignProgress, maxBatch: number): number {
  const left = Math.max(0, c.labelBudget - p.labelsUsed);
  const iterationsLeft = Math.max(1, c.maxIterations - p.iteration + 1);
  return Math.min(maxBatch, left, Math.ceil(left / iterationsLeft));
}

/** Whether a stage of this iteration waits for approval. */
export function needsApproval(c: CampaignSettings, stage: CampaignStage, iteration: number): boolean {
  if (!c.requireApproval || !APPROVABLE_STAGES.includes(stage)) return false;
  if (stage === 'select' && iteration === 1) return false;
  return !c.autopilotStages.includes(stage);
}

/**
 * After an iteration's evaluation: the campaign's best value and stale count, and why it stops (in
 * this order: the target reached, the iterations used up, patience run out, the budget spent), or
 * null to go on.
 */
export function afterEvaluation(
  c: CampaignSettings,
  p: CampaignProgress,
  value: number | null,
): { bestValue: number | null; staleIterations: number; stop: StopReason | null } {
  const improved = value !== null && (p.bestValue === null || value > p.bestValue + MIN_IMPROVEMENT);
  const bestValue = improved ? value : p.bestValue;
  const staleIterations = improved ? 0 : p.staleIterations + 1;
  const stop: StopReason | null =
    value !== null && value >= c.targetValue
      ? 'target_reached'
      : p.iteration >= c.maxIterations
        ? 'max_iterations'
        : staleIterations >= c.patience
          ? 'patience'
          : p.labelsUsed >= c.labelBudget
            ? 'budget_spent'
            : null;
  return { bestValue, staleIterations, stop };
}

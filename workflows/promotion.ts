import { executeChild, proxyActivities, rootCause } from '@temporalio/workflow';
import type { CpuActivities } from '../activities';
import type { PromotionOutcome, PromotionRequest } from '../activities/registry/gate';
import type { GoldRun } from '../activities/registry/runs';
import type { SweepRequest } from '../activities/registry/sweep';
import { inferenceRunWorkflow } from './inference-run';

interface GpuRunOptions {
  /** The gpu task queue's name (config temporal.gpuTaskQueue), for the inference runs. */
  gpuTaskQueue: string;
  heartbeatTimeoutSeconds: number;
}

export interface PromotionWorkflowInput extends GpuRunOptions {
  request: PromotionRequest;
}

export interface ChampionSweepWorkflowInput extends GpuRunOptions {
  request: SweepRequest;
}

const steps = proxyActivities<CpuActivities>({
  startToCloseTimeout: '1 minute',
  retry: { maximumAttempts: 10, nonRetryableErrorTypes: ['RegistryRefused'] },
});

/** Evaluating two runs per slice with bootstrap tests reads every prediction: minutes on a large gold set. */
const judging = proxyActivities<CpuActivities>({
  startToCloseTimeout: '30 minutes',
  retry: { maximumAttempts: 3, nonRetryableErrorTypes: ['RegistryRefused'] },
});

/**
 * A queued run as a child InferenceRunWorkflow (`inference-run-<run_id>`): it takes the one GPU
 * slot, heartbeats, resumes and reports its own failure like any run, and stays reusable after.
 * Answers why it failed, or null.
 */
async function runOnGpu(run: GoldRun, opts: GpuRunOptions): Promise<string | null> {
  if (!run.workflowId) return null;
  try {
    await executeChild(inferenceRunWorkflow, {
      workflowId: run.workflowId,
      args: [
        {
          runId: run.runId,
          workflowId: run.workflowId,
          gpuTaskQueue: opts.gpuTaskQueue,
          heartbeatTimeoutSeconds: opts.heartbeatTimeoutSeconds,
        },
      ],
    });
    return null;
  } catch (err) {
    return rootCause(err) ?? String(err);
  }
}

/**
 * PromotionWorkflow (`promotion-<challenger_version>`, docs/promotion.md): the champion/challenger
 * gate. It plans the two runs on the gold set (reusing completed ones), runs the missing ones on
 * the GPU slot, then one activity evaluates both per slice, judges the gate's rules and records the
 * decision, promoting in the same transaction when every rule passes. A run that fails refuses the
 * promotion (`run_failed`): the gate fails closed.
 */
export async function promotionWorkflow(input: PromotionWorkflowInput): Promise<PromotionOutcome> {
  const plan = await steps.planPromotion(input.request);
  for (const [side, run] of [
    ['challenger', plan.challenger],
    ['champion', plan.champion],
  ] as const) {
    if (!run) continue;
    const error = await runOnGpu(run, input);
    if (error !== null)
      return steps.refusePromotion({
        request: input.request,
        plan,
        rule: 'run_failed',
        reason: `the ${side}'s inference run ${run.runId} of ${run.modelVersion} failed: ${error}`,
      });
  }
  return judging.decidePromotion({ request: input.request, plan });
}

/**
 * ChampionSweepWorkflow (`champion-sweep-<task>`): the champion's runs on the gold sets it has not
 * been evaluated on, then their evaluations and the sweep's record. A gold set whose run fails is
 * reported, not fatal.
 */
export async function championSweepWorkflow(input: ChampionSweepWorkflowInput) {
  const plan = await steps.planChampionSweep(input.request);
  const failed: Array<{ goldId: string; error: string }> = [];
  for (const g of plan.golds) {
    const error = await runOnGpu(g.run, input);
    if (error !== null) failed.push({ goldId: g.goldId, error });
  }
  return judging.finishChampionSweep({ request: input.request, plan, failed });
}

import { ApplicationFailure, Context } from '@temporalio/activity';
import type { GateRule } from '../../core/registry';
import type { ActivityDeps } from '../deps';
import {
  decidePromotion,
  planPromotion,
  refusePromotion,
  type PromotionPlan,
  type PromotionRequest,
} from './gate';
import { finishChampionSweep, planChampionSweep, type SweepPlan, type SweepRequest } from './sweep';
import { refusedAs } from '../refusal';

/** A domain refusal inside an activity (a model gone, a misconfigured floor): no retry mends it. */
export const REGISTRY_REFUSED = 'RegistryRefused';

const refusing = <T>(work: () => Promise<T>): Promise<T> => work().catch(refusedAs(REGISTRY_REFUSED));

/** The workflow run an activity serves: its decision is recorded once per run, whatever the retries. */
function workflowRunId(): string {
  const runId = Context.current().info.workflowExecution?.runId;
  if (!runId)
    throw ApplicationFailure.nonRetryable('the registry activities run inside a workflow', REGISTRY_REFUSED);
  return runId;
}

/** Registry and promotion-gate activities of the `cpu` queue (docs/promotion.md). */
export function createRegistryActivities(deps: ActivityDeps) {
  return {
    planPromotion: (request: PromotionRequest): Promise<PromotionPlan> =>
      refusing(() => planPromotion(deps, request)),
    decidePromotion: (input: { request: PromotionRequest; plan: PromotionPlan }) =>
      refusing(() => decidePromotion(deps, { ...input, workflowRunId: workflowRunId() })),
    refusePromotion: (input: {
      request: PromotionRequest;
      plan: PromotionPlan;
      rule: GateRule;
      reason: string;
    }) => refusing(() => refusePromotion(deps, { ...input, workflowRunId: workflowRunId() })),
    planChampionSweep: (request: SweepRequest): Promise<SweepPlan> =>
      refusing(() => planChampionSweep(deps, request)),
    finishChampionSweep: (input: {
      request: SweepRequest;
      plan: SweepPlan;
      failed: Array<{ goldId: string; error: string }>;
    }) => refusing(() => finishChampionSweep(deps, { ...input, workflowRunId: workflowRunId() })),
  };
}

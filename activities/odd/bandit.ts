import { allocateBudget, BANDIT_PRIOR, observe, updateArm } from '../../core/odd/bandit';
import { cliqueName, parseClique } from '../../core/odd/clique';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { armPosteriors, priorityCandidates } from './cliques';
import type { OddScope } from './scope';

/**
 * The clique bandit's I/O (core/odd/bandit.ts holds the algorithm): posteriors live in
 * odd_clique_arms, every reward in odd_clique_rewards. Selection writes nothing: it is a
 * recommendation that its seed and the posteriors reproduce.
 */

export interface SelectRequest {
  budget: number;
  cliques?: string[];
  candidates: number;
  seed: number;
  scope: OddScope;
}

export async function selectCliques(db: Db, req: SelectRequest) {
  const names = req.cliques
    ? [...new Set(req.cliques.map((c, i) => cliqueName(parseClique(c, `body.cliques.${i}`))))]
    : await priorityCandidates(db, req.scope, req.candidates);
  if (!names.length)
    return { ...emptyAllocation(req), from: 'priority' as const, note: 'no clique in scope to allocate to' };
  const posteriors = await armPosteriors(db, names);
  const arms = names.map((clique) => ({ clique, ...(posteriors.get(clique) ?? BANDIT_PRIOR) }));
  const allocation = allocateBudget(arms, req.budget, req.seed);
  return {
    ...allocation,
    from: req.cliques ? ('request' as const) : ('priority' as const),
    algorithm:
      'Thompson sampling over Beta posteriors: each unit of the budget goes to the clique whose posterior draw is largest',
    allocations: allocation.allocations.map((a) => ({
      ...a,
      observations: posteriors.get(a.clique)?.observations ?? 0,
    })),
  };
}

function emptyAllocation(req: SelectRequest) {
  return { budget: req.budget, units: 0, labels_per_unit: 0, seed: req.seed, allocations: [] };
}

export interface RewardRequest {
  clique: string;
  allocated: number;
  recallBefore: number | null;
  recallAfter: number | null;
}

/** Records a reward and moves the clique's posterior, all in one transaction with its audit entry. */
export async function rewardClique(db: Db, req: RewardRequest, actor: Actor) {
  const clique = cliqueName(parseClique(req.clique, 'body.clique'));
  const observation = observe(req.allocated, req.recallBefore, req.recallAfter);
  return db.$transaction(async (tx) => {
    // The arm row is created at the prior and then locked, so concurrent rewards apply one by one.
    await tx.$executeRaw`
      INSERT INTO odd_clique_arms (clique, alpha, beta) VALUES (${clique}, ${BANDIT_PRIOR.alpha}, ${BANDIT_PRIOR.beta})
      ON CONFLICT (clique) DO NOTHING`;
    const [before] = await tx.$queryRaw<Array<{ alpha: number; beta: number; observations: number }>>`
      SELECT alpha, beta, observations FROM odd_clique_arms WHERE clique = ${clique} FOR UPDATE`;
    const after = updateArm({ clique, alpha: before!.alpha, beta: before!.beta }, observation);
    const arm = await tx.oddCliqueArm.update({
      where: { clique },
      data: observation.observed
        ? {
            alpha: after.alpha,
            beta: after.beta,
            observations: { increment: 1 },
            labels: { increment: req.allocated },
          }
        : {},
    });
    const reward = await tx.oddCliqueReward.create({
      data: {
        clique,
        allocated: req.allocated,
        recallBefore: req.recallBefore,
        recallAfter: req.recallAfter,
        observed: observation.observed,
        gain: observation.observed ? observation.gain : null,
        reward: observation.observed ? observation.reward : null,
        trials: observation.observed ? observation.trials : null,
        alphaAfter: arm.alpha,
        betaAfter: arm.beta,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'odd.clique.rewarded',
      subjectType: 'odd_clique',
      subjectId: clique,
      requestId: actor.requestId,
      detail: {
        reward_id: reward.id,
        allocated: req.allocated,
        recall_before: req.recallBefore,
        recall_after: req.recallAfter,
        observed: observation.observed,
      },
    });
    return {
      id: reward.id,
      clique,
      allocated: req.allocated,
      recall_before: req.recallBefore,
      recall_after: req.recallAfter,
      observation,
      posterior: {
        before: { alpha: before!.alpha, beta: before!.beta, observations: before!.observations },
        after: { alpha: arm.alpha, beta: arm.beta, observations: arm.observations, labels: arm.labels },
      },
      created_at: reward.createdAt.toISOString(),
    };
  });
}

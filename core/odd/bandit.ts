import { betaMean, betaSampler, betaSd } from './beta';

/**
 * The clique bandit (docs/odd-coverage.md): which cliques give recall back when labels are spent on
 * them. Each clique is an arm with a Beta posterior over its success rate θ, "the chance that 100
 * labels spent there reach a full gain" — Thompson sampling (Thompson 1933; Agrawal and Goyal,
 * COLT 2012) with fractional Bernoulli updates, since the observed rewards lie in [0, 1] rather
 * than in {0, 1}.
 *
 * - Prior: Beta(1, 1) (uniform) for a clique never rewarded.
 * - Observation: the recall gain (recall_after − recall_before) per LABELS_PER_TRIAL labels, scaled
 *   so that FULL_GAIN counts as 1 and clipped to [0, 1] (a loss is a failure, not a negative
 *   success). n labels count as n / LABELS_PER_TRIAL trials (at most MAX_TRIALS_PER_REWARD, so
 *   one large batch cannot settle the posterior alone): α += trials·r, β += trials·(1 − r).
 * - A reward without both recalls is recorded but observes nothing: the posterior stays.
 * - Allocation: the budget is cut into units; for each unit every arm draws θ from its posterior
 *   and the largest draw wins the unit. An arm's labels are its wins' share of the budget (largest
 *   remainder), which is probability matching: labels in proportion to the chance of being best.
 */

export const BANDIT_PRIOR = { alpha: 1, beta: 1 } as const;
export const LABELS_PER_TRIAL = 100;
/** A recall gain of 5 points per 100 labels is a full success. */
export const FULL_GAIN = 0.05;
export const MAX_TRIALS_PER_REWARD = 10;
/** Thompson draws per allocation at most (fewer when the budget has fewer labels). */
export const MAX_UNITS = 1000;

export interface Arm {
  clique: string;
  alpha: number;
  beta: number;
}

export type Observation =
  | { observed: false; reason: string }
  | {
      observed: true;
      /** recall_after − recall_before. */
      gain: number;
      gain_per_100_labels: number;
      /** The success in [0, 1] the posterior is updated with. */
      reward: number;
      trials: number;
    };

export function observe(
  allocated: number,
  recallBefore: number | null,
  recallAfter: number | null,
): Observation {
  if (recallBefore === null || recallAfter === null)
    return {
      observed: false,
      reason: `recall_${recallBefore === null ? 'before' : 'after'} is missing: nothing was measured, so the posterior stays`,
    };
  if (!(allocated > 0)) throw new Error('allocated must be positive');
  const gain = recallAfter - recallBefore;
  const gainPer100 = (gain * LABELS_PER_TRIAL) / allocated;
  return {
    observed: true,
    gain,
    gain_per_100_labels: gainPer100,
    reward: Math.min(1, Math.max(0, gainPer100 / FULL_GAIN)),
    trials: Math.min(MAX_TRIALS_PER_REWARD, allocated / LABELS_PER_TRIAL),
  };
}

/** The posterior after an observation (unchanged when nothing was observed). */
export function updateArm<A extends Arm>(arm: A, obs: Observation): A {
  if (!obs.observed) return arm;
  return {
    ...arm,
    alpha: arm.alpha + obs.trials * obs.reward,
    beta: arm.beta + obs.trials * (1 - obs.reward),
  };
}

export interface ArmAllocation {
  clique: string;
  labels: number;
  posterior: { alpha: number; beta: number; mean: number; sd: number };
  draws: {
    won: number;
    of: number;
    /** Mean of the arm's θ draws (close to the posterior mean for many units). */
    mean_sample: number;
    max_sample: number;
  };
  /** The arm with the highest posterior mean: what a purely greedy allocation would give everything. */
  greedy: boolean;
  /** Labels won through uncertainty: all of a non-greedy arm's labels, none of the greedy arm's. */
  exploration_labels: number;
  reason: string;
}

export interface Allocation {
  budget: number;
  units: number;
  labels_per_unit: number;
  seed: number;
  allocations: ArmAllocation[];
}

/** Integers summing to `total` in proportion to `weights` (largest remainder; ties by position). */
export function largestRemainder(weights: readonly number[], total: number): number[] {
  const sum = weights.reduce((s, w) => s + w, 0);
  if (sum <= 0) return weights.map(() => 0);
  const exact = weights.map((w) => (w * total) / sum);
  const out = exact.map(Math.floor);
  let left = total - out.reduce((s, v) => s + v, 0);
  const order = exact.map((e, i) => ({ i, r: e - Math.floor(e) })).sort((a, b) => b.r - a.r || a.i - b.i);
  for (const { i } of order) {
    if (left-- <= 0) break;
    out[i]!++;
  }
  return out;
}

/** Thompson-sampling allocation of `budget` labels across `arms`, reproducible from `seed`. */
export function allocateBudget(arms: readonly Arm[], budget: number, seed: number): Allocation {
  if (!arms.length) throw new Error('no arm to allocate to');
  const sorted = [...arms].sort((a, b) => a.clique.localeCompare(b.clique));
  const units = Math.min(budget, MAX_UNITS);
  const sample = betaSampler(seed);
  const won = new Array<number>(sorted.length).fill(0);
  const sampleSum = new Array<number>(sorted.length).fill(0);
  const sampleMax = new Array<number>(sorted.length).fill(0);
  for (let u = 0; u < units; u++) {
    let best = 0;
    let bestDraw = -1;
    sorted.forEach((arm, i) => {
      const draw = sample(arm.alpha, arm.beta);
      sampleSum[i]! += draw;
      if (draw > sampleMax[i]!) sampleMax[i] = draw;
      if (draw > bestDraw) {
        bestDraw = draw;
        best = i;
      }
    });
    won[best]!++;
  }
  const labels = largestRemainder(won, budget);
  const means = sorted.map((a) => betaMean(a.alpha, a.beta));
  const greedyIndex = means.indexOf(Math.max(...means));
  const allocations = sorted.map((arm, i): ArmAllocation => {
    const greedy = i === greedyIndex;
    const share = won[i]! / units;
    return {
      clique: arm.clique,
      labels: labels[i]!,
      posterior: { alpha: arm.alpha, beta: arm.beta, mean: means[i]!, sd: betaSd(arm.alpha, arm.beta) },
      draws: { won: won[i]!, of: units, mean_sample: sampleSum[i]! / units, max_sample: sampleMax[i]! },
      greedy,
      exploration_labels: greedy ? 0 : labels[i]!,
      reason: greedy
        ? `highest posterior mean ${means[i]!.toFixed(3)}; its draw was the largest in ${won[i]} of ${units} units (${(100 * share).toFixed(1)} %)`
        : won[i]
          ? `posterior mean ${means[i]!.toFixed(3)} is below the best, but its uncertainty (sd ${betaSd(arm.alpha, arm.beta).toFixed(3)}) made its draw the largest in ${won[i]} of ${units} units: exploration`
          : `posterior mean ${means[i]!.toFixed(3)}; its draw never was the largest in ${units} units`,
    };
  });
  allocations.sort((a, b) => b.labels - a.labels || a.clique.localeCompare(b.clique));
  return { budget, units, labels_per_unit: budget / units, seed, allocations };
}

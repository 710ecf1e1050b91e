import betaRandom from '@stdlib/random-base-beta';

/** Draws from Beta(alpha, beta). */
export type BetaSampler = (alpha: number, beta: number) => number;

/**
 * A Beta sampler reproducible from `seed`: stdlib's (Jöhnk's method and Gamma ratios on an MT19937
 * stream), so one seed gives one allocation on every machine. MT19937 seeds are integers in
 * [1, 2³² − 1]; any other seed is folded into that range.
 */
export const betaSampler = (seed: number): BetaSampler =>
  betaRandom.factory({ seed: Math.trunc(Math.abs(seed)) % 0xffffffff || 1 });

export const betaMean = (alpha: number, beta: number): number => alpha / (alpha + beta);
export const betaSd = (alpha: number, beta: number): number =>
  Math.sqrt((alpha * beta) / ((alpha + beta) ** 2 * (alpha + beta + 1)));

import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';

/**
 * Seeded resampling for bootstrap intervals: the same seed always draws the same replicates, so an
 * interval can be reproduced from the parameters it reports.
 */

/**
 * Calls `visit(b, indices)` for each of nBoot resamples of n items drawn with replacement. The draws
 * are uniform integers in [0, n-1] from xoroshiro128plus(seed), resample by resample, item by item:
 * the rows of stats' `resampleIndices`, and tallied, bootstrapFrames' counts: a seed names the same
 * resamples everywhere in core/quality.
 * One buffer is reused: `visit` must not keep it.
 */
export function forEachResample(
  n: number,
  nBoot: number,
  seed: number,
  visit: (b: number, indices: Uint32Array) => void,
): void {
  const rng = xoroshiro128plus(seed);
  const indices = new Uint32Array(n);
  for (let b = 0; b < nBoot; b++) {
    for (let i = 0; i < n; i++) indices[i] = unsafeUniformIntDistribution(0, n - 1, rng);
    visit(b, indices);
  }
}

/** `nBoot` resamples of `n` items with replacement, each as the count of times every item was drawn. */
export function bootstrapFrames(n: number, nBoot: number, seed: number): Uint32Array[] {
  const out: Uint32Array[] = [];
  if (n === 0) return out;
  forEachResample(n, nBoot, seed, (_, indices) => {
    const counts = new Uint32Array(n);
    for (const i of indices) counts[i]!++;
    out.push(counts);
  });
  return out;
}

/** The q-quantile of ascending values, linearly interpolated (numpy's default `linear` method). */
export function quantileSorted(sorted: ArrayLike<number>, q: number): number {
  const pos = (sorted.length - 1) * q;
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo]! + (sorted[hi]! - sorted[lo]!) * (pos - lo);
}

/** The percentile interval [alpha/2, 1 - alpha/2] of bootstrap replicates; nulls when there are none. */
export function percentileInterval(
  values: readonly number[],
  alpha: number,
): { lo: number | null; hi: number | null } {
  if (!values.length) return { lo: null, hi: null };
  const sorted = Float64Array.from(values).sort();
  return { lo: quantileSorted(sorted, alpha / 2), hi: quantileSorted(sorted, 1 - alpha / 2) };
}

import { xoroshiro128plus } from 'pure-rand';
import { InputError } from '../errors';
import { forEachResample, quantileSorted } from './resample';

/**
 * Evaluation statistics: seeded percentile-bootstrap intervals, a paired test between two runs scored
 * on the same items, and the Wilson interval of a proportion. Every figure is checked against the
 * reference implementation named beside it (tools/reference/stats_reference.py writes the numbers
 * the tests read): numpy's quantile method='linear' (Hyndman-Fan type 7, ./resample's
 * quantileSorted; scipy.stats.bootstrap uses it too), scipy.stats.bootstrap(method='percentile'),
 * scipy.stats.wilcoxon(method='asymptotic'), scipy.stats.permutation_test and statsmodels'
 * proportion_confint(method='wilson').
 */

export interface BootstrapOptions {
  /** Two-sided: the interval holds 1 - alpha of the resampled statistics. */
  alpha?: number;
  nBoot?: number;
  /** A uint32; the same seed over the same data gives the same interval. */
  seed?: number;
}

/** Spec BootstrapIn defaults. */
export const BOOTSTRAP_DEFAULTS = { alpha: 0.05, nBoot: 2000, seed: 12345 } as const;
export const PERMUTATION_DEFAULT = 10000;

export interface BootstrapInterval {
  mean: number;
  lo: number;
  hi: number;
  alpha: number;
  n_boot: number;
  seed: number;
  n: number;
}

export interface BootstrapStatisticInterval {
  /** The statistic over the items as given (indices 0..n-1); null where it is not finite. */
  estimate: number | null;
  /** Percentiles of the finite resampled statistics; null when none was finite. */
  lo: number | null;
  hi: number | null;
  alpha: number;
  n_boot: number;
  seed: number;
  n: number;
  /** Resamples whose statistic was not finite (e.g. a ratio whose denominator drew only zeros): left out. */
  n_undefined: number;
}

interface ResolvedBootstrap {
  alpha: number;
  nBoot: number;
  seed: number;
}

function resolveBootstrap(opts: BootstrapOptions): ResolvedBootstrap {
  const alpha = opts.alpha ?? BOOTSTRAP_DEFAULTS.alpha;
  const nBoot = opts.nBoot ?? BOOTSTRAP_DEFAULTS.nBoot;
  const seed = opts.seed ?? BOOTSTRAP_DEFAULTS.seed;
  if (!(alpha > 0 && alpha < 1)) {
    throw new InputError('alpha must lie in (0, 1)', [{ field: 'alpha', message: 'must lie in (0, 1)' }]);
  }
  if (!Number.isInteger(nBoot) || nBoot < 1) {
    throw new InputError('n_boot must be a positive integer', [
      { field: 'n_boot', message: 'must be a positive integer' },
    ]);
  }
  checkSeed(seed);
  return { alpha, nBoot, seed };
}

function checkSeed(seed: number): void {
  // pure-rand keeps 32 bits of the seed: a wider or negative one would silently alias another.
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32) {
    throw new InputError('seed must be an integer in [0, 2^32)', [
      { field: 'seed', message: 'must be an integer in [0, 2^32)' },
    ]);
  }
}

function checkFinite(values: readonly number[], field: string): void {
  if (values.length === 0) {
    throw new InputError(`${field} is empty`, [{ field, message: 'needs at least one value' }]);
  }
  if (!values.every(Number.isFinite)) {
    throw new InputError(`${field} holds a value that is not a finite number`, [
      { field, message: 'must be finite numbers' },
    ]);
  }
}

/** The resample index matrix, row-major (nBoot rows of n indices): what every bootstrap here draws. */
export function resampleIndices(n: number, opts: { nBoot?: number; seed?: number } = {}): Uint32Array {
  const { nBoot, seed } = resolveBootstrap(opts);
  const out = new Uint32Array(n * nBoot);
  forEachResample(n, nBoot, seed, (b, indices) => out.set(indices, b * n));
  return out;
}

/**
 * Percentile bootstrap interval of any statistic of n items: `statistic` is called with the indices
 * of each resample (and once with 0..n-1 for the estimate). For per-image metrics that are ratios
 * (precision = sum TP / sum detections over the drawn images) resample the images and recompute the
 * ratio, not the mean of per-image ratios.
 */
export function bootstrapStatistic(
  n: number,
  statistic: (indices: Uint32Array) => number,
  opts: BootstrapOptions = {},
): BootstrapStatisticInterval {
  const { alpha, nBoot, seed } = resolveBootstrap(opts);
  if (!Number.isInteger(n) || n < 1) {
    throw new InputError('nothing to resample', [{ field: 'n', message: 'needs at least one item' }]);
  }
  const identity = new Uint32Array(n);
  for (let i = 0; i < n; i++) identity[i] = i;
  const whole = statistic(identity);
  const draws = new Float64Array(nBoot);
  let finite = 0;
  forEachResample(n, nBoot, seed, (_b, indices) => {
    const v = statistic(indices);
    if (Number.isFinite(v)) draws[finite++] = v;
  });
  const sorted = draws.subarray(0, finite).sort();
  return {
    estimate: Number.isFinite(whole) ? whole : null,
    lo: finite ? quantileSorted(sorted, alpha / 2) : null,
    hi: finite ? quantileSorted(sorted, 1 - alpha / 2) : null,
    alpha,
    n_boot: nBoot,
    seed,
    n,
    n_undefined: nBoot - finite,
  };
}

/** Percentile bootstrap interval of the mean of `values` (spec BootstrapIn). */
export function bootstrapInterval(values: readonly number[], opts: BootstrapOptions = {}): BootstrapInterval {
  checkFinite(values, 'values');
  const r = bootstrapStatistic(
    values.length,
    (indices) => {
      let sum = 0;
      for (let i = 0; i < indices.length; i++) sum += values[indices[i]!]!;
      return sum / indices.length;
    },
    opts,
  );
  // The mean of finite values is finite, so no resample is left out and none of these is null.
  return { mean: r.estimate!, lo: r.lo!, hi: r.hi!, alpha: r.alpha, n_boot: r.n_boot, seed: r.seed, n: r.n };
}

// --- The normal distribution -------------------------------------------------------------------

/**
 * erfc by W. J. Cody's rational Chebyshev approximations (CALERF, 1969; relative error below 1e-15
 * over the whole line), the algorithm behind most libm and Cephes-style implementations.
 */
export function erfc(x: number): number {
  const y = Math.abs(x);
  let result: number;
  if (y <= 0.46875) {
    const ysq = y > 1.11e-16 ? y * y : 0;
    let num = ERF_A[4]! * ysq;
    let den = ysq;
    for (let i = 0; i < 3; i++) {
      num = (num + ERF_A[i]!) * ysq;
      den = (den + ERF_B[i]!) * ysq;
    }
    return 1 - (x * (num + ERF_A[3]!)) / (den + ERF_B[3]!);
  }
  if (y <= 4) {
    let num = ERF_C[8]! * y;
    let den = y;
    for (let i = 0; i < 7; i++) {
      num = (num + ERF_C[i]!) * y;
      den = (den + ERF_D[i]!) * y;
    }
    result = (num + ERF_C[7]!) / (den + ERF_D[7]!);
  } else if (y >= 26.543) {
    result = 0;
  } else {
    const ysq = 1 / (y * y);
    let num = ERF_P[5]! * ysq;
    let den = ysq;
    for (let i = 0; i < 4; i++) {
      num = (num + ERF_P[i]!) * ysq;
      den = (den + ERF_Q[i]!) * ysq;
    }
    result = (ysq * (num + ERF_P[4]!)) / (den + ERF_Q[4]!);
    result = (1 / Math.sqrt(Math.PI) - result) / y;
  }
  if (result !== 0) {
    // exp(-y²) split as exp(-ysq²)·exp(-del) keeps the relative error of the product small.
    const ysq = Math.trunc(y * 16) / 16;
    const del = (y - ysq) * (y + ysq);
    result = Math.exp(-ysq * ysq) * Math.exp(-del) * result;
  }
  return x < 0 ? 2 - result : result;
}

const ERF_A = [
  3.1611237438705655, 113.86415415105016, 377.485237685302, 3209.3775891384694, 0.18577770618460315,
];
const ERF_B = [23.601290952344122, 244.02463793444417, 1282.6165260773723, 2844.2368334391704];
const ERF_C = [
  0.5641884969886701, 8.883149794388377, 66.11919063714163, 298.6351381974001, 881.952221241769,
  1712.0476126340707, 2051.0783778260716, 1230.3393547979972, 2.1531153547440383e-8,
];
const ERF_D = [
  15.744926110709835, 117.6939508913125, 537.1811018620099, 1621.3895745666903, 3290.7992357334597,
  4362.619090143247, 3439.3676741437216, 1230.3393548037495,
];
const ERF_P = [
  0.30532663496123236, 0.36034489994980445, 0.12578172611122926, 0.016083785148742275, 0.0006587491615298378,
  0.016315387137302097,
];
const ERF_Q = [
  2.568520192289822, 1.8729528499234604, 0.5279051029514285, 0.06051834131244132, 0.0023352049762686918,
];

/** P(Z > z) for a standard normal Z. */
const normalSf = (z: number): number => 0.5 * erfc(z / Math.SQRT2);

/**
 * The standard normal quantile: Wichura's AS 241 (PPND16, 1988), relative error about 1e-16 — the
 * algorithm R's qnorm uses.
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) {
    if (p === 0) return -Infinity;
    if (p === 1) return Infinity;
    return NaN;
  }
  const q = p - 0.5;
  if (Math.abs(q) <= 0.425) {
    const r = 0.180625 - q * q;
    return (q * horner(PPND_A, r)) / horner(PPND_B, r);
  }
  let r = Math.sqrt(-Math.log(q < 0 ? p : 1 - p));
  let value: number;
  if (r <= 5) {
    r -= 1.6;
    value = horner(PPND_C, r) / horner(PPND_D, r);
  } else {
    r -= 5;
    value = horner(PPND_E, r) / horner(PPND_F, r);
  }
  return q < 0 ? -value : value;
}

/** c[0] + c[1]·x + ... + c[k]·x^k. */
function horner(c: readonly number[], x: number): number {
  let acc = 0;
  for (let i = c.length - 1; i >= 0; i--) acc = acc * x + c[i]!;
  return acc;
}

const PPND_A = [
  3.3871328727963665, 133.14166789178438, 1971.5909503065513, 13731.69376550946, 45921.95393154987,
  67265.7709270087, 33430.57558358813, 2509.0809287301227,
];
const PPND_B = [
  1, 42.31333070160091, 687.1870074920579, 5394.196021424751, 21213.794301586597, 39307.89580009271,
  28729.085735721943, 5226.495278852854,
];
const PPND_C = [
  1.4234371107496835, 4.630337846156546, 5.769497221460691, 3.6478483247632045, 1.2704582524523684,
  0.2417807251774506, 0.022723844989269184, 0.0007745450142783414,
];
const PPND_D = [
  1, 2.053191626637759, 1.6763848301838038, 0.6897673349851, 0.14810397642748008, 0.015198666563616457,
  0.0005475938084995345, 1.0507500716444169e-9,
];
const PPND_E = [
  6.657904643501103, 5.463784911164114, 1.7848265399172913, 0.29656057182850487, 0.026532189526576124,
  0.0012426609473880784, 0.000027115555687434876, 2.0103343992922881e-7,
];
const PPND_F = [
  1, 0.599832206555888, 0.1369298809227358, 0.014875361290850615, 0.0007868691311456133,
  0.000018463183175100548, 1.421511758316446e-7, 2.0442631033899397e-15,
];

// --- Proportions -------------------------------------------------------------------------------

export interface ProportionInterval {
  successes: number;
  n: number;
  proportion: number;
  lo: number;
  hi: number;
  alpha: number;
}

/**
 * The Wilson score interval of successes/n, as statsmodels proportion_confint(method='wilson'),
 * clipped to [0, 1] like it. For a point estimate beside it, the control sample's smoothed precision
 * is core/control's laplacePrecision, measured only from MIN_CONTROL_SAMPLE reviews up.
 */
export function wilsonInterval(successes: number, n: number, alpha = 0.05): ProportionInterval {
  if (!Number.isInteger(n) || n < 1)
    throw new InputError('n must be a positive integer', [
      { field: 'n', message: 'must be a positive integer' },
    ]);
  if (!Number.isInteger(successes) || successes < 0 || successes > n) {
    throw new InputError('successes must be an integer in [0, n]', [
      { field: 'successes', message: 'must be an integer in [0, n]' },
    ]);
  }
  if (!(alpha > 0 && alpha < 1)) {
    throw new InputError('alpha must lie in (0, 1)', [{ field: 'alpha', message: 'must lie in (0, 1)' }]);
  }
  const crit = -normalQuantile(alpha / 2);
  const crit2 = crit * crit;
  const q = successes / n;
  const denom = 1 + crit2 / n;
  const center = (q + crit2 / (2 * n)) / denom;
  const dist = (crit * Math.sqrt((q * (1 - q)) / n + crit2 / (4 * n * n))) / denom;
  const clip = (v: number) => Math.min(1, Math.max(0, v));
  return { successes, n, proportion: q, lo: clip(center - dist), hi: clip(center + dist), alpha };
}

// --- Paired tests ------------------------------------------------------------------------------

export interface PairedOptions extends BootstrapOptions {
  /** Sign flips drawn; when 2^n ≤ nPerm every flip is enumerated instead (an exact p-value). */
  nPerm?: number;
}

export interface WilcoxonResult {
  /** min(R+, R-), scipy's two-sided statistic. */
  statistic: number;
  /** Sum of the ranks of |d| over the positive differences (a > b). */
  r_plus: number;
  /** (R+ - n(n+1)/4) / se, signed: positive when a tends to exceed b (scipy reports -|z|); null when every d is 0. */
  z: number | null;
  p_value: number | null;
  /** Differences left after dropping the zeros (zero_method='wilcox'). */
  n_nonzero: number;
}

export interface PairedSignificance {
  n: number;
  /** Mean of a - b with its percentile bootstrap interval. */
  mean_difference: BootstrapInterval;
  permutation: { p_value: number; n_perm: number; exact: boolean; seed: number };
  wilcoxon: WilcoxonResult;
}

/**
 * Compares two runs scored on the same items (per image, per slice): `a[i]` and `b[i]` are the two
 * scores of item i. Three views of d = a - b:
 * - the mean difference with its bootstrap interval (bootstrapInterval over d);
 * - a two-sided paired sign-flip permutation test of mean(d) = 0: under the null each d keeps its
 *   size and has either sign. p = (1 + #{|Σ±d| ≥ |Σd|}) / (nPerm + 1) over nPerm seeded flips (the
 *   +1 counts the observed flip, so p is never 0), or the exact share over all 2^n flips when
 *   2^n ≤ nPerm — then it equals scipy.stats.permutation_test(permutation_type='samples'). Ties are
 *   compared with scipy's relative tolerance of 100 ulps;
 * - the Wilcoxon signed-rank test as scipy.stats.wilcoxon(zero_method='wilcox', correction=False,
 *   method='asymptotic'): zeros dropped, average ranks for ties with the tie-corrected variance,
 *   two-sided normal p-value.
 */
export function pairedSignificance(
  a: readonly number[],
  b: readonly number[],
  opts: PairedOptions = {},
): PairedSignificance {
  checkFinite(a, 'a');
  checkFinite(b, 'b');
  if (a.length !== b.length) {
    throw new InputError('a and b must score the same items', [
      { field: 'b', message: `has ${b.length} scores, a has ${a.length}` },
    ]);
  }
  const nPerm = opts.nPerm ?? PERMUTATION_DEFAULT;
  if (!Number.isInteger(nPerm) || nPerm < 1) {
    throw new InputError('n_perm must be a positive integer', [
      { field: 'n_perm', message: 'must be a positive integer' },
    ]);
  }
  const d = a.map((x, i) => x - b[i]!);
  const mean_difference = bootstrapInterval(d, opts);
  return {
    n: d.length,
    mean_difference,
    permutation: signFlipTest(d, nPerm, mean_difference.seed),
    wilcoxon: wilcoxonSignedRank(d),
  };
}

function signFlipTest(d: readonly number[], nPerm: number, seed: number): PairedSignificance['permutation'] {
  const n = d.length;
  const observed = Math.abs(d.reduce((s, x) => s + x, 0));
  const threshold = observed - observed * 100 * Number.EPSILON;
  const flippedSum = (bit: (i: number) => boolean) => {
    let s = 0;
    for (let i = 0; i < n; i++) s += bit(i) ? -d[i]! : d[i]!;
    return Math.abs(s);
  };
  if (n < 31 && 2 ** n <= nPerm) {
    let extreme = 0;
    for (let mask = 0; mask < 2 ** n; mask++)
      if (flippedSum((i) => ((mask >>> i) & 1) === 1) >= threshold) extreme++;
    return { p_value: extreme / 2 ** n, n_perm: 2 ** n, exact: true, seed };
  }
  // Its own stream: the jump keeps the flips independent of the bootstrap drawn from the same seed.
  const rng = xoroshiro128plus(seed).jump!();
  const words = new Int32Array(Math.ceil(n / 32));
  let extreme = 0;
  for (let p = 0; p < nPerm; p++) {
    for (let w = 0; w < words.length; w++) words[w] = rng.unsafeNext();
    if (flippedSum((i) => ((words[i >>> 5]! >>> (i & 31)) & 1) === 1) >= threshold) extreme++;
  }
  return { p_value: (extreme + 1) / (nPerm + 1), n_perm: nPerm, exact: false, seed };
}

/** Average ranks (1-based) of `values`, ties sharing the mean of their ranks, with the tie group sizes. */
function averageRanks(values: readonly number[]): { ranks: number[]; tieGroups: number[] } {
  const order = values.map((_, i) => i).sort((i, j) => values[i]! - values[j]!);
  const ranks = new Array<number>(values.length);
  const tieGroups: number[] = [];
  for (let start = 0; start < order.length;) {
    let end = start + 1;
    while (end < order.length && values[order[end]!] === values[order[start]!]) end++;
    const rank = (start + 1 + end) / 2;
    for (let k = start; k < end; k++) ranks[order[k]!] = rank;
    tieGroups.push(end - start);
    start = end;
  }
  return { ranks, tieGroups };
}

function wilcoxonSignedRank(d: readonly number[]): WilcoxonResult {
  const nonzero = d.filter((x) => x !== 0);
  const n = nonzero.length;
  const { ranks, tieGroups } = averageRanks(nonzero.map(Math.abs));
  let rPlus = 0;
  let rMinus = 0;
  nonzero.forEach((x, i) => (x > 0 ? (rPlus += ranks[i]!) : (rMinus += ranks[i]!)));
  const tieCorrection = tieGroups.reduce((s, t) => s + t ** 3 - t, 0);
  const se = Math.sqrt((n * (n + 1) * (2 * n + 1) - tieCorrection / 2) / 24);
  const z = se > 0 ? (rPlus - (n * (n + 1)) / 4) / se : null;
  return {
    statistic: Math.min(rPlus, rMinus),
    r_plus: rPlus,
    z,
    p_value: z === null ? null : Math.min(1, 2 * normalSf(Math.abs(z))),
    n_nonzero: n,
  };
}

import binomcoefln from '@stdlib/math-base-special-binomcoefln';
import chi2test from '@stdlib/stats-chi2test';
import kolmogorovCdf from '@stdlib/stats-kstest/lib/marsaglia.js';

/**
 * Drift between the champion's training data and recent sessions (docs/drift.md): categorical
 * features by the chi-square test of homogeneity, numeric ones by the two-sample Kolmogorov–Smirnov
 * test, each against a Bonferroni-corrected threshold. p-values come from @stdlib (the chi-square
 * CDF; the Marsaglia–Tsang–Wang Kolmogorov CDF) and are checked against scipy in drift.test.ts with
 * numbers written by tools/reference/drift_reference.py.
 */

export type Counts = Record<string, number>;

/** The numeric image statistics ingest measures per frame (frames.context). */
export const IMAGE_FEATURES = ['brightness', 'sharpness'] as const;
export type ImageFeature = (typeof IMAGE_FEATURES)[number];

/** What one side of a comparison holds, each feature as its raw observations. */
export interface DriftSample {
  /** Objects per ontology class name. */
  classes: Counts;
  /** Frames per value of each context dimension (lighting, weather …). */
  context: Record<string, Counts>;
  /** Confidences of the objects that carry one. */
  confidence: number[];
  /** Per frame: mean luma and variance of the Laplacian, as ingest measured them. */
  image: Record<ImageFeature, number[]>;
}

export interface TestResult {
  statistic: number;
  pValue: number;
}

export interface Chi2Result extends TestResult {
  df: number;
  /** The categories tested, in column order (those seen on neither side are dropped). */
  categories: string[];
}

/**
 * Chi-square test of homogeneity of two count vectors (a 2×k contingency table), with Yates'
 * correction when k = 2 — what scipy.stats.chi2_contingency does by default. Categories seen on
 * neither side are left out (their expected count is 0); fewer than two left is no test (null).
 */
export function chiSquareHomogeneity(a: Counts, b: Counts): Chi2Result | null {
  const categories = [...new Set([...Object.keys(a), ...Object.keys(b)])]
    .filter((c) => (a[c] ?? 0) + (b[c] ?? 0) > 0)
    .sort();
  if (categories.length < 2) return null;
  const rows = [a, b].map((side) => categories.map((c) => side[c] ?? 0));
  if (rows.some((r) => r.every((v) => v === 0))) return null;
  const out = chi2test(rows, { correct: true });
  return { statistic: out.statistic, pValue: out.pValue, df: out.df, categories };
}

/** The largest distance between the two empirical CDFs. */
export function ksStatistic(x: readonly number[], y: readonly number[]): number {
  const a = [...x].sort((p, q) => p - q);
  const b = [...y].sort((p, q) => p - q);
  let i = 0;
  let j = 0;
  let d = 0;
  while (i < a.length && j < b.length) {
    const v = Math.min(a[i]!, b[j]!);
    // Step past every tie at v on both sides before comparing: ties move both CDFs at once.
    while (i < a.length && a[i] === v) i++;
    while (j < b.length && b[j] === v) j++;
    d = Math.max(d, Math.abs(i / a.length - j / b.length));
  }
  return d;
}

/**
 * P(D⁺ₙ ≥ d), the one-sided Smirnov statistic's survival function, exact (Birnbaum–Tingey), summed
 * as a survival function so that small p-values keep their digits.
 */
export function smirnovSf(n: number, d: number): number {
  if (d <= 0) return 1;
  if (d >= 1) return 0;
  let sum = 0;
  for (let j = 0; j <= Math.floor(n * (1 - d)); j++)
    sum += Math.exp(binomcoefln(n, j) + (n - j) * Math.log(1 - d - j / n) + (j - 1) * Math.log(d + j / n));
  return Math.min(1, d * sum);
}

/**
 * P(Dₙ ≥ d) for the two-sided one-sample Kolmogorov statistic, as scipy's `kstwo.sf` computes it
 * (Simard & L'Ecuyer): in the tail, where a p-value decides, twice the exact one-sided survival
 * function (the two sides' joint excess is below double precision there); elsewhere one minus the
 * exact Marsaglia–Tsang–Wang CDF, used only where @stdlib computes it exactly (n·d² ≤ 3.76) — past
 * that it switches to an approximation some 10⁻⁴ off.
 */
export function kolmogorovSf(n: number, d: number): number {
  if (d >= 1) return 0;
  if (n * d <= 0.5) return 1;
  const s = n * d * d;
  if (n * d >= n - 1) return Math.min(1, 2 * (1 - d) ** n);
  if (d >= 0.5 || s > (n <= 140 ? 3.76 : 2.2)) return s >= 370 ? 0 : Math.min(1, 2 * smirnovSf(n, d));
  return Math.min(1, Math.max(0, 1 - kolmogorovCdf(d, n)));
}

/**
 * Two-sample, two-sided Kolmogorov–Smirnov test with scipy's asymptotic p-value
 * (`ks_2samp(method='asymp')`): the one-sample Kolmogorov distribution at the effective size
 * round(n·m/(n+m)). Exact two-sample p-values differ from it only for small samples, which the scan
 * does not test (`min_samples`).
 */
export function ksTwoSample(x: readonly number[], y: readonly number[]): TestResult {
  if (!x.length || !y.length) throw new Error('ksTwoSample: both samples need observations');
  const statistic = ksStatistic(x, y);
  const effective = Math.round((x.length * y.length) / (x.length + y.length));
  return { statistic, pValue: kolmogorovSf(effective, statistic) };
}

export interface DriftOptions {
  /** Family-wise significance level of the whole scan. */
  alpha: number;
  /** Observations a side needs for a feature to be tested. */
  minSamples: number;
}

export interface DriftFinding {
  feature: string;
  test: 'chi2' | 'ks';
  statistic: number;
  p_value: number;
  /** alpha ÷ the number of tests of the scan (Bonferroni). */
  threshold: number;
  drifted: boolean;
  detail: Record<string, unknown>;
}

export interface NotMeasurable {
  feature: string;
  reason: string;
  reference_n: number;
  recent_n: number;
}

export interface DriftComparison {
  findings: DriftFinding[];
  not_measurable: NotMeasurable[];
  /** The per-test threshold: alpha over the tests run. */
  threshold: number;
}

const total = (c: Counts): number => Object.values(c).reduce((s, v) => s + v, 0);

/** Shares per category, for a reader to see what moved. */
const shares = (c: Counts): Counts => {
  const n = total(c);
  return Object.fromEntries(Object.entries(c).map(([k, v]) => [k, n ? v / n : 0]));
};

const median = (v: readonly number[]): number => {
  const s = [...v].sort((p, q) => p - q);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};

/**
 * Compares the reference (training) side with the recent side feature by feature. A feature with
 * fewer than `minSamples` observations on either side is reported as not measurable instead of
 * tested, so a thin sample never reads as drift or as no drift. Every test run counts toward the
 * Bonferroni correction, so adding context dimensions does not make false alarms likelier.
 */
export function compareDrift(
  reference: DriftSample,
  recent: DriftSample,
  opts: DriftOptions,
): DriftComparison {
  const tested: Array<Omit<DriftFinding, 'threshold' | 'drifted'>> = [];
  const notMeasurable: NotMeasurable[] = [];
  const tooFew = (feature: string, refN: number, recN: number): boolean => {
    if (refN >= opts.minSamples && recN >= opts.minSamples) return false;
    notMeasurable.push({
      feature,
      reason: `fewer than ${opts.minSamples} observations on a side`,
      reference_n: refN,
      recent_n: recN,
    });
    return true;
  };
  const categorical = (feature: string, ref: Counts, rec: Counts) => {
    if (tooFew(feature, total(ref), total(rec))) return;
    const r = chiSquareHomogeneity(ref, rec);
    if (!r) {
      notMeasurable.push({
        feature,
        reason: 'fewer than two categories observed',
        reference_n: total(ref),
        recent_n: total(rec),
      });
      return;
    }
    tested.push({
      feature,
      test: 'chi2',
      statistic: r.statistic,
      p_value: r.pValue,
      detail: {
        df: r.df,
        categories: r.categories,
        reference: { n: total(ref), counts: ref, shares: shares(ref) },
        recent: { n: total(rec), counts: rec, shares: shares(rec) },
      },
    });
  };
  const numeric = (feature: string, ref: readonly number[], rec: readonly number[]) => {
    if (tooFew(feature, ref.length, rec.length)) return;
    const r = ksTwoSample(ref, rec);
    tested.push({
      feature,
      test: 'ks',
      statistic: r.statistic,
      p_value: r.pValue,
      detail: {
        reference: { n: ref.length, median: median(ref) },
        recent: { n: rec.length, median: median(rec) },
      },
    });
  };

  categorical('classes', reference.classes, recent.classes);
  const dimensions = [...new Set([...Object.keys(reference.context), ...Object.keys(recent.context)])].sort();
  for (const key of dimensions)
    categorical(`context.${key}`, reference.context[key] ?? {}, recent.context[key] ?? {});
  numeric('confidence', reference.confidence, recent.confidence);
  for (const key of IMAGE_FEATURES) numeric(`image.${key}`, reference.image[key], recent.image[key]);
  const threshold = opts.alpha / Math.max(1, tested.length);
  return {
    findings: tested.map((t) => ({ ...t, threshold, drifted: t.p_value < threshold })),
    not_measurable: notMeasurable,
    threshold,
  };
}

/** A scan's defaults: the route's when its body leaves them out, and the governance controller's. */
export const DRIFT_DEFAULTS = { windowDays: 7, alpha: 0.01, minSamples: 30 } as const;

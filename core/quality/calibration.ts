import { MIN_CONTROL_SAMPLE } from '../control';
import { InputError } from '../errors';

/**
 * Confidence calibration from human verdicts on machine objects: does a detector's 0.8 mean right
 * 80% of the time, and what map makes it so. Two maps, each fitted per class and globally; a class
 * with fewer than MIN_CONTROL_SAMPLE verdicts uses the global map and says so.
 *
 * - temperature: conf → sigmoid(logit(conf) / T), T minimising the negative log-likelihood of the
 *   verdicts. The NLL is convex in 1/T (a one-coefficient logistic regression on logit(conf)), so a
 *   Newton step guarded by bisection on its derivative finds the one minimum deterministically; T is
 *   kept in [0.01, 100] (at_bound says when it stopped there: verdicts perfectly separated by conf, or
 *   conf anti-correlated with being right). conf is clipped to [1e-6, 1 - 1e-6] before the logit so a
 *   score of exactly 0 or 1 has finite odds. Checked against scipy.optimize.minimize_scalar on the
 *   same NLL (to 1e-4 in T).
 * - isotonic: the monotone step map of sklearn IsotonicRegression(increasing=True, y_min=0, y_max=1,
 *   out_of_bounds='clip'): points sorted by conf, equal confs (closer than 1e-15, sklearn's
 *   `_make_unique`) pooled into one point weighted by their count, pool-adjacent-violators (adjacent
 *   blocks of equal value pooled too), then only breakpoints that start or end a flat run kept.
 *   Applying it clips conf to the fitted range and interpolates linearly between breakpoints, as
 *   sklearn's predict does through scipy's interp1d. Block values are kept as exact ratios of counts
 *   (correct / seen), so ties between blocks are decided without rounding.
 *
 * ECE and the reliability table use 10 equal-width bins over [0, 1]: bin k holds k/10 ≤ conf <
 * (k+1)/10, the last bin is closed ([0.9, 1]); ECE = Σ (count_k / N)·|accuracy_k - mean_conf_k|.
 * "after" figures apply the fitted maps to the samples they were fitted on (in-sample, so optimistic,
 * isotonic most of all).
 */

export interface CalibrationSample {
  class_id: number;
  conf: number;
  correct: boolean;
}

export type CalibrationMethod = 'temperature' | 'isotonic';

export interface TemperatureMap {
  method: 'temperature';
  temperature: number;
  /** True when T stopped at a bound of [0.01, 100] rather than at a minimum inside. */
  at_bound: boolean;
}

export interface IsotonicMap {
  method: 'isotonic';
  /** Breakpoints, conf ascending (sklearn's X_thresholds_). */
  x: number[];
  /** Calibrated confidence at each breakpoint (sklearn's y_thresholds_). */
  y: number[];
}

export type CalibrationMap = TemperatureMap | IsotonicMap;

export interface ClassCalibration {
  class_id: number;
  samples: number;
  /** 'class': fitted on the class's verdicts; 'global': too few of them, so the global map applies. */
  source: 'class' | 'global';
  note: string | null;
  map: CalibrationMap;
}

export interface CalibrationFit {
  method: CalibrationMethod;
  samples: number;
  global: CalibrationMap;
  classes: ClassCalibration[];
}

export const TEMPERATURE_BOUNDS = [0.01, 100] as const;
const CONF_CLIP = 1e-6;
/** sklearn's `_make_unique` merges confidences closer than numpy float64 resolution. */
const SAME_CONF = 1e-15;

const logit = (conf: number): number => {
  const p = Math.min(1 - CONF_CLIP, Math.max(CONF_CLIP, conf));
  return Math.log(p / (1 - p));
};
const sigmoid = (u: number): number => (u >= 0 ? 1 / (1 + Math.exp(-u)) : Math.exp(u) / (1 + Math.exp(u)));

function checkSamples(samples: readonly CalibrationSample[]): void {
  if (samples.length === 0) {
    throw new InputError('no verdicts to calibrate on', [{ field: 'samples', message: 'is empty' }]);
  }
  samples.forEach((s, i) => {
    if (!(s.conf >= 0 && s.conf <= 1)) {
      throw new InputError('conf must lie in [0, 1]', [
        { field: `samples[${i}].conf`, message: 'must lie in [0, 1]' },
      ]);
    }
  });
}

/**
 * T minimising Σ softplus(-s·z/T) with z = logit(conf), s = ±1 for right/wrong (the verdicts' NLL),
 * solved in β = 1/T, where the NLL is convex and its derivative Σ z·(sigmoid(βz) - y) increases.
 */
export function fitTemperature(samples: readonly CalibrationSample[]): TemperatureMap {
  checkSamples(samples);
  const z = samples.map((s) => logit(s.conf));
  const y = samples.map((s) => (s.correct ? 1 : 0));
  const slope = (beta: number): { g: number; h: number } => {
    let g = 0;
    let h = 0;
    for (let i = 0; i < z.length; i++) {
      const p = sigmoid(beta * z[i]!);
      g += z[i]! * (p - y[i]!);
      h += z[i]! * z[i]! * p * (1 - p);
    }
    return { g, h };
  };
  let lo = 1 / TEMPERATURE_BOUNDS[1];
  let hi = 1 / TEMPERATURE_BOUNDS[0];
  if (slope(lo).g >= 0) return { method: 'temperature', temperature: TEMPERATURE_BOUNDS[1], at_bound: true };
  if (slope(hi).g <= 0) return { method: 'temperature', temperature: TEMPERATURE_BOUNDS[0], at_bound: true };
  let beta = 1;
  for (let iter = 0; iter < 200 && hi - lo > 1e-15 * hi; iter++) {
    const { g, h } = slope(beta);
    if (g === 0) break;
    if (g > 0) hi = beta;
    else lo = beta;
    const newton = beta - g / h;
    // Newton while it stays inside the bracket, else bisect: converges whatever the start.
    const next = h > 0 && newton > lo && newton < hi ? newton : (lo + hi) / 2;
    if (Math.abs(next - beta) <= 1e-15 * beta) break;
    beta = next;
  }
  return { method: 'temperature', temperature: 1 / beta, at_bound: false };
}

/** sklearn IsotonicRegression(increasing=True, y_min=0, y_max=1) on (conf, correct): its kept breakpoints. */
export function fitIsotonic(samples: readonly CalibrationSample[]): IsotonicMap {
  checkSamples(samples);
  const sorted = [...samples].sort((a, b) => a.conf - b.conf);
  // Pooled points as [conf, correct count, count]; then blocks of points, merged while not increasing.
  const points: Array<[number, number, number]> = [];
  for (const s of sorted) {
    const last = points[points.length - 1];
    if (last && s.conf - last[0] < SAME_CONF) {
      last[1] += s.correct ? 1 : 0;
      last[2] += 1;
    } else points.push([s.conf, s.correct ? 1 : 0, 1]);
  }
  const blocks: Array<{ correct: number; count: number; points: number }> = [];
  for (const [, correct, count] of points) {
    let block = { correct, count, points: 1 };
    // Pool while the previous block is not below this one, compared as exact ratios of counts.
    let prev = blocks[blocks.length - 1];
    while (prev && prev.correct * block.count >= block.correct * prev.count) {
      blocks.pop();
      block = {
        correct: prev.correct + block.correct,
        count: prev.count + block.count,
        points: prev.points + block.points,
      };
      prev = blocks[blocks.length - 1];
    }
    blocks.push(block);
  }
  const fitted = blocks.flatMap((b) => new Array<number>(b.points).fill(b.correct / b.count));
  const x: number[] = [];
  const y: number[] = [];
  for (let k = 0; k < points.length; k++) {
    const inner = k > 0 && k < points.length - 1;
    if (!inner || fitted[k] !== fitted[k - 1] || fitted[k] !== fitted[k + 1]) {
      x.push(points[k]![0]);
      y.push(fitted[k]!);
    }
  }
  return { method: 'isotonic', x, y };
}

const fitMap = (method: CalibrationMethod, samples: readonly CalibrationSample[]): CalibrationMap =>
  method === 'temperature' ? fitTemperature(samples) : fitIsotonic(samples);

/** A calibrated confidence from one map. */
export function applyMap(map: CalibrationMap, conf: number): number {
  if (map.method === 'temperature') return sigmoid(logit(conf) / map.temperature);
  const { x, y } = map;
  if (x.length === 1) return y[0]!;
  const c = Math.min(x[x.length - 1]!, Math.max(x[0]!, conf));
  // scipy interp1d: the first breakpoint ≥ c (searchsorted left), kept within [1, len-1].
  let lo = 0;
  let hi = x.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (x[mid]! < c) lo = mid + 1;
    else hi = mid;
  }
  const right = Math.min(Math.max(lo, 1), x.length - 1);
  const left = right - 1;
  const slope = (y[right]! - y[left]!) / (x[right]! - x[left]!);
  return slope * (c - x[left]!) + y[left]!;
}

/** Fits one method per class (MIN_CONTROL_SAMPLE verdicts up) and globally. */
export function fitCalibration(
  samples: readonly CalibrationSample[],
  method: CalibrationMethod,
): CalibrationFit {
  checkSamples(samples);
  const global = fitMap(method, samples);
  const byClass = new Map<number, CalibrationSample[]>();
  for (const s of samples) {
    const list = byClass.get(s.class_id);
    if (list) list.push(s);
    else byClass.set(s.class_id, [s]);
  }
  const classes = [...byClass.entries()]
    .sort(([a], [b]) => a - b)
    .map(([class_id, list]): ClassCalibration => {
      if (list.length >= MIN_CONTROL_SAMPLE) {
        return { class_id, samples: list.length, source: 'class', note: null, map: fitMap(method, list) };
      }
      return {
        class_id,
        samples: list.length,
        source: 'global',
        note: `${list.length} of the ${MIN_CONTROL_SAMPLE} verdicts a class fit needs: the global map applies`,
        map: global,
      };
    });
  return { method, samples: samples.length, global, classes };
}

/** The calibrated confidence of an object of `class_id` (the global map for a class the fit has not seen). */
export function applyCalibration(fit: CalibrationFit, class_id: number, conf: number): number {
  const cls = fit.classes.find((c) => c.class_id === class_id);
  return applyMap(cls ? cls.map : fit.global, conf);
}

export interface ReliabilityBin {
  lo: number;
  hi: number;
  count: number;
  mean_conf: number | null;
  accuracy: number | null;
}

export interface Reliability {
  ece: number;
  bins: ReliabilityBin[];
}

export const RELIABILITY_BINS = 10;
const binEdge = (k: number): number => k / RELIABILITY_BINS;

/** The bin k with k/10 ≤ conf < (k+1)/10, the last bin closed. */
function binOf(conf: number): number {
  let k = Math.min(RELIABILITY_BINS - 1, Math.max(0, Math.floor(conf * RELIABILITY_BINS)));
  // conf·10 can round across an edge; the edges k/10 decide.
  while (k > 0 && conf < binEdge(k)) k--;
  while (k < RELIABILITY_BINS - 1 && conf >= binEdge(k + 1)) k++;
  return k;
}

/** Reliability table and expected calibration error of confidences against verdicts. */
export function reliability(confs: readonly number[], correct: readonly boolean[]): Reliability {
  const count = new Array<number>(RELIABILITY_BINS).fill(0);
  const confSum = new Array<number>(RELIABILITY_BINS).fill(0);
  const rightSum = new Array<number>(RELIABILITY_BINS).fill(0);
  confs.forEach((c, i) => {
    const k = binOf(c);
    count[k]! += 1;
    confSum[k]! += c;
    rightSum[k]! += correct[i] ? 1 : 0;
  });
  let ece = 0;
  const bins = count.map((n, k): ReliabilityBin => {
    const mean_conf = n ? confSum[k]! / n : null;
    const accuracy = n ? rightSum[k]! / n : null;
    if (n) ece += (n / confs.length) * Math.abs(accuracy! - mean_conf!);
    return { lo: binEdge(k), hi: binEdge(k + 1), count: n, mean_conf, accuracy };
  });
  return { ece, bins };
}

export interface CalibrationReport {
  samples: number;
  min_class_samples: number;
  before: Reliability;
  methods: Record<CalibrationMethod, { fit: CalibrationFit; after: Reliability }>;
  /** ECE of each class's own verdicts before and after each method. */
  classes: Array<{
    class_id: number;
    samples: number;
    ece_before: number;
    ece_after: Record<CalibrationMethod, number>;
  }>;
}

/** Both maps fitted on the verdicts, with ECE and reliability before and after (in-sample). */
export function calibrationReport(samples: readonly CalibrationSample[]): CalibrationReport {
  checkSamples(samples);
  const correct = samples.map((s) => s.correct);
  const fits = {
    temperature: fitCalibration(samples, 'temperature'),
    isotonic: fitCalibration(samples, 'isotonic'),
  };
  const calibrated = (fit: CalibrationFit, list: readonly CalibrationSample[]) =>
    list.map((s) => applyCalibration(fit, s.class_id, s.conf));
  const methods = {
    temperature: {
      fit: fits.temperature,
      after: reliability(calibrated(fits.temperature, samples), correct),
    },
    isotonic: { fit: fits.isotonic, after: reliability(calibrated(fits.isotonic, samples), correct) },
  };
  const classes = fits.temperature.classes.map(({ class_id, samples: n }) => {
    const list = samples.filter((s) => s.class_id === class_id);
    const verdicts = list.map((s) => s.correct);
    const eceAfter = (fit: CalibrationFit) => reliability(calibrated(fit, list), verdicts).ece;
    return {
      class_id,
      samples: n,
      ece_before: reliability(
        list.map((s) => s.conf),
        verdicts,
      ).ece,
      ece_after: { temperature: eceAfter(fits.temperature), isotonic: eceAfter(fits.isotonic) },
    };
  });
  return {
    samples: samples.length,
    min_class_samples: MIN_CONTROL_SAMPLE,
    before: reliability(
      samples.map((s) => s.conf),
      correct,
    ),
    methods,
    classes,
  };
}

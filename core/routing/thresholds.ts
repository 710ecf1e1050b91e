import { laplacePrecision, MIN_CONTROL_SAMPLE } from '../control';

/**
 * Fitting auto-accept thresholds from human verdicts on machine objects (control verdicts and
 * first reviews): for the judged objects of a class, the lowest confidence t at which the objects
 * with conf ≥ t reach the target precision — Laplace-smoothed, (correct + 1) / (judged + 2), over
 * at least the spec's minimum sample (25) — so as many objects as the evidence allows auto-accept
 * and no fewer than 25 verdicts stand behind the figure. The same fit over every class gives the
 * global threshold.
 */
export interface JudgedObject {
  className: string;
  conf: number;
  correct: boolean;
}

export type ThresholdStatus = 'fitted' | 'insufficient' | 'unreachable';

export interface ThresholdFigure {
  /** fitted: a threshold reaches the target; insufficient: fewer verdicts than the minimum; unreachable: enough verdicts, no threshold reaches it. */
  status: ThresholdStatus;
  /** The fitted threshold; null unless fitted. */
  threshold: number | null;
  judged: number;
  correct: number;
  /** Objects with conf ≥ threshold, how many were correct, and their smoothed precision (null unless fitted). */
  at_threshold: { judged: number; correct: number; precision: number } | null;
  /** Share of the judged objects at or above the threshold: what would have auto-accepted. */
  coverage: number;
  /** Smoothed precision over all judged objects (every confidence). */
  precision_all: number;
  reason: string;
}

export interface ThresholdFitResult {
  target_precision: number;
  min_samples: number;
  global: ThresholdFigure;
  classes: Record<string, ThresholdFigure>;
}

export function fitThreshold(
  judged: readonly JudgedObject[],
  targetPrecision: number,
  minSamples: number = MIN_CONTROL_SAMPLE,
): ThresholdFigure {
  const correctAll = judged.filter((j) => j.correct).length;
  const base = {
    judged: judged.length,
    correct: correctAll,
    precision_all: laplacePrecision(correctAll, judged.length),
  };
  if (judged.length < minSamples) {
    return {
      ...base,
      status: 'insufficient',
      threshold: null,
      at_threshold: null,
      coverage: 0,
      reason: `${judged.length} verdict(s); at least ${minSamples} are needed`,
    };
  }
  const byConf = [...judged].sort((a, b) => b.conf - a.conf);
  let best: { threshold: number; judged: number; correct: number; precision: number } | null = null;
  let n = 0;
  let c = 0;
  for (const [i, j] of byConf.entries()) {
    n++;
    if (j.correct) c++;
    // A threshold sits at a confidence boundary: every object of the same conf is on the same side.
    if (byConf[i + 1]?.conf === j.conf) continue;
    const precision = laplacePrecision(c, n);
    if (n >= minSamples && precision >= targetPrecision)
      best = { threshold: j.conf, judged: n, correct: c, precision };
  }
  if (!best) {
    return {
      ...base,
      status: 'unreachable',
      threshold: null,
      at_threshold: null,
      coverage: 0,
      reason: `no confidence threshold with at least ${minSamples} verdicts above it reaches precision ${targetPrecision}`,
    };
  }
  return {
    ...base,
    status: 'fitted',
    threshold: best.threshold,
    at_threshold: { judged: best.judged, correct: best.correct, precision: best.precision },
    coverage: best.judged / judged.length,
    reason: `${best.correct} of ${best.judged} verdicts at conf ≥ ${best.threshold} were correct`,
  };
}

export function fitThresholds(
  judged: readonly JudgedObject[],
  targetPrecision: number,
  minSamples: number = MIN_CONTROL_SAMPLE,
): ThresholdFitResult {
  const byClass = new Map<string, JudgedObject[]>();
  for (const j of judged) byClass.set(j.className, [...(byClass.get(j.className) ?? []), j]);
  return {
    target_precision: targetPrecision,
    min_samples: minSamples,
    global: fitThreshold(judged, targetPrecision, minSamples),
    classes: Object.fromEntries(
      [...byClass]
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([name, js]) => [name, fitThreshold(js, targetPrecision, minSamples)]),
    ),
  };
}

/**
 * The routing policy's side of an active fit: the global threshold (when fitted) becomes the
 * default auto_accept_conf; a fitted class gets its own threshold, an unreachable class never
 * auto-accepts (null), a class with too few verdicts follows the global threshold.
 */
export function fitPolicyDefaults(fit: Pick<ThresholdFitResult, 'global' | 'classes'>): {
  auto_accept_conf: number | null;
  class_thresholds: Record<string, number | null>;
} {
  const class_thresholds: Record<string, number | null> = {};
  for (const [name, f] of Object.entries(fit.classes)) {
    if (f.status === 'fitted') class_thresholds[name] = f.threshold;
    else if (f.status === 'unreachable') class_thresholds[name] = null;
  }
  return { auto_accept_conf: fit.global.status === 'fitted' ? fit.global.threshold : null, class_thresholds };
}

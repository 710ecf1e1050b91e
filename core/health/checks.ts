import type { AppConfig } from '../config';

/**
 * The inspector's six session health checks, as pure functions of what ingest recorded. Each check
 * gives a score in [0, 1] (1 = perfect) and a verdict against its configured threshold; the session
 * passes when every check passes, and its score is the mean of the check scores.
 */

export type HealthThresholds = AppConfig['health'];

/** Exposure of one frame: mean luma 0–255 and the shares of crushed and blown pixels. */
export interface ExposureStats {
  meanLuma: number;
  clippedDark: number;
  clippedBright: number;
}

export interface HealthInputs {
  /** Rate the frames were extracted at. */
  targetFps: number;
  /** Source timestamps of the accepted frames, in frame index order. */
  timestampsMs: number[];
  duplicateCount: number;
  rejectedCount: number;
  /** Exposure of the frames examined (all, or a sample spread over the drive). */
  exposure: ExposureStats[];
  expectedSensors: string[];
  presentSensors: string[];
}

export const CHECK_NAMES = [
  'frame_rate',
  'monotonicity',
  'duplicates',
  'rejected',
  'exposure',
  'sensors',
] as const;
export type CheckName = (typeof CHECK_NAMES)[number];

export interface CheckResult {
  passed: boolean;
  score: number;
  /** The measured figure the verdict compares with `threshold`. */
  value: number;
  threshold: number;
  detail: string;
  [extra: string]: unknown;
}

export interface HealthReport {
  passed: boolean;
  score: number;
  checks: Record<CheckName, CheckResult>;
}

/** Gaps listed in a report at most; the count and the largest gap cover the rest. */
const MAX_LISTED_GAPS = 20;

const clamp01 = (x: number): number => Math.min(1, Math.max(0, x));
const round = (x: number, digits = 4): number => Number(x.toFixed(digits));

/**
 * Frames the source failed to deliver. Ingest drops duplicates and rejects bad frames after
 * extraction, so gaps between *accepted* frames are expected; what the target rate implies minus
 * what was delivered (accepted + dropped + rejected) is the shortfall the check judges. The gaps
 * between accepted frames are listed for the reader.
 */
export function checkFrameRate(inputs: HealthInputs, t: HealthThresholds): CheckResult {
  const ts = inputs.timestampsMs;
  const expectedIntervalMs = 1000 / inputs.targetFps;
  if (ts.length === 0) {
    return {
      passed: false,
      score: 0,
      value: 1,
      threshold: t.maxMissingFrameRatio,
      detail: 'the session has no frames',
      gaps: [],
      gap_count: 0,
      largest_gap_ms: 0,
    };
  }
  const spanMs = Math.max(...ts) - Math.min(...ts);
  const expectedFrames = Math.floor((spanMs * inputs.targetFps) / 1000 + 1e-9) + 1;
  const delivered = ts.length + inputs.duplicateCount + inputs.rejectedCount;
  const missingRatio = clamp01((expectedFrames - delivered) / expectedFrames);
  const gaps: Array<{ after_index: number; from_ms: number; to_ms: number; ms: number }> = [];
  let gapCount = 0;
  let largestGapMs = 0;
  for (let i = 1; i < ts.length; i++) {
    const interval = ts[i]! - ts[i - 1]!;
    if (interval > t.gapFactor * expectedIntervalMs) {
      gapCount++;
      largestGapMs = Math.max(largestGapMs, interval);
      if (gaps.length < MAX_LISTED_GAPS)
        gaps.push({ after_index: i - 1, from_ms: ts[i - 1]!, to_ms: ts[i]!, ms: round(interval, 3) });
    }
  }
  const passed = missingRatio <= t.maxMissingFrameRatio;
  return {
    passed,
    score: round(1 - missingRatio),
    value: round(missingRatio),
    threshold: t.maxMissingFrameRatio,
    detail: `${delivered} of ${expectedFrames} frames delivered over ${round(spanMs / 1000, 3)} s at ${inputs.targetFps} fps`,
    expected_frames: expectedFrames,
    delivered_frames: delivered,
    gap_count: gapCount,
    largest_gap_ms: round(largestGapMs, 3),
    gaps,
  };
}

/** Every step between consecutive frames must move time forward. */
export function checkMonotonicity(inputs: HealthInputs, t: HealthThresholds): CheckResult {
  const ts = inputs.timestampsMs;
  const violations: number[] = [];
  for (let i = 1; i < ts.length; i++) if (!(ts[i]! > ts[i - 1]!)) violations.push(i);
  const steps = Math.max(1, ts.length - 1);
  return {
    passed: violations.length <= t.maxNonMonotonic,
    score: round(1 - violations.length / steps),
    value: violations.length,
    threshold: t.maxNonMonotonic,
    detail: violations.length
      ? `${violations.length} timestamp step(s) do not increase`
      : 'timestamps strictly increase',
    first_violations: violations.slice(0, MAX_LISTED_GAPS),
  };
}

function ratioCheck(count: number, delivered: number, threshold: number, what: string): CheckResult {
  const ratio = delivered > 0 ? count / delivered : 0;
  return {
    passed: ratio <= threshold,
    score: round(1 - ratio),
    value: round(ratio),
    threshold,
    detail: `${count} of ${delivered} extracted frames ${what}`,
  };
}

const deliveredCount = (i: HealthInputs): number =>
  i.timestampsMs.length + i.duplicateCount + i.rejectedCount;

export const checkDuplicates = (i: HealthInputs, t: HealthThresholds): CheckResult =>
  ratioCheck(i.duplicateCount, deliveredCount(i), t.maxDuplicateRatio, 'dropped as near-duplicates');

export const checkRejected = (i: HealthInputs, t: HealthThresholds): CheckResult =>
  ratioCheck(i.rejectedCount, deliveredCount(i), t.maxRejectedRatio, 'rejected by the ingest quality gate');

export function isBadlyExposed(e: ExposureStats, t: HealthThresholds): boolean {
  return (
    e.meanLuma < t.minMeanLuma ||
    e.meanLuma > t.maxMeanLuma ||
    e.clippedDark > t.maxClippedFraction ||
    e.clippedBright > t.maxClippedFraction
  );
}

export function checkExposure(inputs: HealthInputs, t: HealthThresholds): CheckResult {
  const n = inputs.exposure.length;
  if (n === 0) {
    return {
      passed: false,
      score: 0,
      value: 1,
      threshold: t.maxBadExposureRatio,
      detail: 'no frame could be examined for exposure',
      examined: 0,
    };
  }
  const dark = inputs.exposure.filter(
    (e) => e.meanLuma < t.minMeanLuma || e.clippedDark > t.maxClippedFraction,
  ).length;
  const bad = inputs.exposure.filter((e) => isBadlyExposed(e, t)).length;
  const ratio = bad / n;
  return {
    passed: ratio <= t.maxBadExposureRatio,
    score: round(1 - ratio),
    value: round(ratio),
    threshold: t.maxBadExposureRatio,
    detail: `${bad} of ${n} examined frames badly exposed (${dark} too dark, ${bad - dark} too bright)`,
    examined: n,
    mean_luma: round(inputs.exposure.reduce((s, e) => s + e.meanLuma, 0) / n, 2),
  };
}

/** A session declares the streams it should carry; each one ingest did not find is missing. */
export function checkSensors(inputs: HealthInputs): CheckResult {
  const present = new Set(inputs.presentSensors);
  const expected = [...new Set(inputs.expectedSensors)];
  const missing = expected.filter((s) => !present.has(s));
  return {
    passed: missing.length === 0,
    score: expected.length ? round(1 - missing.length / expected.length) : 1,
    value: missing.length,
    threshold: 0,
    detail: expected.length
      ? missing.length
        ? `missing ${missing.join(', ')}`
        : `all ${expected.length} declared streams present`
      : 'the session declares no streams',
    expected,
    missing,
  };
}

export function scoreSessionHealth(inputs: HealthInputs, thresholds: HealthThresholds): HealthReport {
  const checks: Record<CheckName, CheckResult> = {
    frame_rate: checkFrameRate(inputs, thresholds),
    monotonicity: checkMonotonicity(inputs, thresholds),
    duplicates: checkDuplicates(inputs, thresholds),
    rejected: checkRejected(inputs, thresholds),
    exposure: checkExposure(inputs, thresholds),
    sensors: checkSensors(inputs),
  };
  const results = CHECK_NAMES.map((name) => checks[name]);
  return {
    passed: results.every((c) => c.passed),
    score: round(results.reduce((s, c) => s + c.score, 0) / results.length),
    checks,
  };
}

/**
 * Exposure from a greyscale raster (one byte per pixel): the inspector's fallback when ingest
 * recorded no per-frame stats.
 */
export function exposureFromLuma(luma: Uint8Array): ExposureStats {
  if (luma.length === 0) throw new RangeError('an empty raster has no exposure');
  let sum = 0;
  let dark = 0;
  let bright = 0;
  for (const v of luma) {
    sum += v;
    if (v <= 5) dark++;
    else if (v >= 250) bright++;
  }
  return {
    meanLuma: round(sum / luma.length, 3),
    clippedDark: round(dark / luma.length),
    clippedBright: round(bright / luma.length),
  };
}

/** Indices of `count` frames spread evenly over `total` (all of them when count ≥ total). */
export function spreadSample(total: number, count: number): number[] {
  if (count >= total) return Array.from({ length: total }, (_, i) => i);
  return Array.from({ length: count }, (_, k) => Math.floor(((k + 0.5) * total) / count));
}

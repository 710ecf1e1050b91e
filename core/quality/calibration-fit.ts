import { MIN_CONTROL_SAMPLE } from '../control';
import { isMachineSource } from '../objects/sources';
import type { RoutingCalibration } from '../routing';
import {
  applyCalibration,
  calibrationReport,
  fitCalibration,
  reliability,
  type CalibrationFit,
  type CalibrationMethod,
  type CalibrationSample,
  type Reliability,
} from './calibration';

/**
 * Fitting a calibration from the store's human verdicts (POST /api/quality/calibrate/fit,
 * docs/quality-measure.md): which verdicts count, which method to keep when the caller does not
 * say, and the form routing applies. The maps themselves are core/quality/calibration.ts.
 */

/** Fewer verdicts than this overall and no calibration is fitted (spec Limits: minimum sample 25). */
export const MIN_CALIBRATION_SAMPLES = MIN_CONTROL_SAMPLE;
/** Folds of the cross-validation that picks a method when the caller does not. */
export const SELECTION_FOLDS = 5;
/** Review actions that judge a machine proposal; `edit` (geometry only) says nothing about its class. */
export const JUDGING_ACTIONS = ['confirm', 'accept', 'relabel', 'reject'] as const;

const record = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};

/**
 * A review's verdict on the machine proposal it found, as a calibration sample; null when the
 * review did not judge one: its `before` is not machine-source or has no conf in [0, 1] or class,
 * or the action is not a judging one. Correct: confirmed or accepted (or relabelled) with the
 * class unchanged and not rejected; incorrect: rejected, or the class changed.
 */
export function reviewVerdict(review: {
  action: string;
  before: unknown;
  after: unknown;
}): CalibrationSample | null {
  const before = record(review.before);
  const after = record(review.after);
  if (typeof before.source !== 'string' || !isMachineSource(before.source)) return null;
  if (!(JUDGING_ACTIONS as readonly string[]).includes(review.action)) return null;
  const conf = before.conf;
  const classId = before.class_id;
  if (typeof conf !== 'number' || !(conf >= 0 && conf <= 1)) return null;
  if (typeof classId !== 'number' || !Number.isInteger(classId)) return null;
  const rejected = review.action === 'reject' || after.state === 'rejected';
  const sameClass = after.class_id === undefined || after.class_id === classId;
  return { class_id: classId, conf, correct: !rejected && sameClass };
}

export interface MethodSelection {
  chosen: CalibrationMethod;
  /** How the method was decided. */
  by: 'request' | 'cross_validation';
  folds: number;
  /** Out-of-fold ECE of each method (null when the caller chose). */
  cv_ece: Record<CalibrationMethod, number> | null;
}

/**
 * Out-of-fold ECE of a method: sample i belongs to fold i mod `folds` (the caller's order, which
 * is deterministic), each fold is calibrated by the maps fitted on the others.
 */
export function crossValidatedEce(
  samples: readonly CalibrationSample[],
  method: CalibrationMethod,
  folds: number = SELECTION_FOLDS,
): number {
  const calibrated = new Array<number>(samples.length);
  for (let k = 0; k < folds; k++) {
    const train = samples.filter((_, i) => i % folds !== k);
    const held = samples.map((s, i) => ({ s, i })).filter(({ i }) => i % folds === k);
    if (!held.length) continue;
    if (!train.length) {
      for (const { s, i } of held) calibrated[i] = s.conf;
      continue;
    }
    const fit = fitCalibration(train, method);
    for (const { s, i } of held) calibrated[i] = applyCalibration(fit, s.class_id, s.conf);
  }
  return reliability(
    calibrated,
    samples.map((s) => s.correct),
  ).ece;
}

/**
 * The method to keep: the caller's, or the one with the lower out-of-fold ECE. In-sample ECE
 * would always pick isotonic (a step map can fit its own verdicts almost exactly); held-out
 * verdicts show when it only memorised them. A tie goes to temperature (one parameter).
 */
export function selectMethod(
  samples: readonly CalibrationSample[],
  requested: CalibrationMethod | null,
): MethodSelection {
  if (requested) return { chosen: requested, by: 'request', folds: SELECTION_FOLDS, cv_ece: null };
  const cv_ece = {
    temperature: crossValidatedEce(samples, 'temperature'),
    isotonic: crossValidatedEce(samples, 'isotonic'),
  };
  const chosen = cv_ece.isotonic < cv_ece.temperature - 1e-12 ? 'isotonic' : 'temperature';
  return { chosen, by: 'cross_validation', folds: SELECTION_FOLDS, cv_ece };
}

export interface ClassEce {
  class_id: number;
  samples: number;
  /** 'class': the class's own map; 'global': too few verdicts, the global map applies. */
  map: 'class' | 'global';
  ece_before: number;
  ece_after: number;
}

export interface CalibrationFitReport {
  method: CalibrationMethod;
  samples: number;
  selection: MethodSelection;
  fit: CalibrationFit;
  before: Reliability;
  after: Reliability;
  /** The other method's in-sample ECE, for comparison. */
  alternative: { method: CalibrationMethod; ece_after: number };
  classes: ClassEce[];
}

/** Fits the chosen method and reports ECE and reliability before and after, overall and per class (in-sample). */
export function fitReport(
  samples: readonly CalibrationSample[],
  requested: CalibrationMethod | null,
): CalibrationFitReport {
  const selection = selectMethod(samples, requested);
  const method = selection.chosen;
  const other: CalibrationMethod = method === 'temperature' ? 'isotonic' : 'temperature';
  const report = calibrationReport(samples);
  const fit = report.methods[method].fit;
  const mapOf = new Map(fit.classes.map((c) => [c.class_id, c.source]));
  return {
    method,
    samples: samples.length,
    selection,
    fit,
    before: report.before,
    after: report.methods[method].after,
    alternative: { method: other, ece_after: report.methods[other].after.ece },
    classes: report.classes.map((c) => ({
      class_id: c.class_id,
      samples: c.samples,
      map: mapOf.get(c.class_id) ?? 'global',
      ece_before: c.ece_before,
      ece_after: c.ece_after[method],
    })),
  };
}

/**
 * A stored fit in the form routing applies (core/routing): class maps by class name, only for
 * classes with a map of their own (the others take the global map anyway).
 */
export function routingCalibration(
  calibrationId: string,
  fit: CalibrationFit,
  classNames: ReadonlyMap<number, string>,
): RoutingCalibration {
  const classes: RoutingCalibration['classes'] = {};
  for (const c of fit.classes) {
    const name = classNames.get(c.class_id);
    if (name !== undefined && c.source === 'class') classes[name] = c.map;
  }
  return { calibration_id: calibrationId, method: fit.method, global: fit.global, classes };
}

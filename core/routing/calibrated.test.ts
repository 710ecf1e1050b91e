import { fitCalibration, type CalibrationSample } from '../quality/calibration';
import { routingCalibration } from '../quality/calibration-fit';
import { fitThresholds } from './thresholds';
import {
  calibratedConf,
  distanceToAutoAccept,
  isUncertain,
  resolvePolicy,
  routeObject,
  routingConf,
  type AgentPolicy,
  type RoutingCalibration,
} from '.';

/** An overconfident detector: at 0.9 it is right half the time, at 0.3 never. */
const overconfident: RoutingCalibration = {
  calibration_id: 'cal-1',
  method: 'isotonic',
  global: { method: 'isotonic', x: [0.3, 0.9], y: [0, 0.5] },
  classes: { car: { method: 'isotonic', x: [0.3, 0.9], y: [0.2, 0.95] } },
};
const defaults: AgentPolicy = { auto_accept_conf: 0.8, require_agreement: false, review_low: 0.35 };
const calibrated: AgentPolicy = { ...defaults, calibration: overconfident };
const obj = (conf: number, className: string) => ({
  conf,
  agreement: 1,
  entropy: 0,
  pathsRan: ['closed_set'],
  className,
});

describe('routing under an active calibration', () => {
  it('compares the calibrated conf with the thresholds, the class map first and the global map otherwise', () => {
    expect(calibratedConf(overconfident, 'car', 0.9)).toBeCloseTo(0.95);
    expect(calibratedConf(overconfident, 'truck', 0.9)).toBeCloseTo(0.5);
    expect(calibratedConf(overconfident, undefined, 0.6)).toBeCloseTo(0.25);
    // The same raw 0.9: a truck auto-accepts uncalibrated, goes to review calibrated (0.5 < 0.8).
    expect(routeObject(obj(0.9, 'truck'), defaults).route).toBe('auto_accept');
    expect(routeObject(obj(0.9, 'truck'), calibrated)).toEqual({
      route: 'review',
      reason: 'calibrated conf 0.500 (raw 0.900) in [0.35, 0.8)',
    });
    // A car's own map keeps it confident.
    expect(routeObject(obj(0.9, 'car'), calibrated).route).toBe('auto_accept');
    // Down to annotate: 0.5 raw → 0.167 calibrated (global) is under review_low.
    expect(routeObject(obj(0.5, 'truck'), calibrated).route).toBe('annotate');
    expect(routingConf(obj(0.9, 'truck'), defaults)).toBe(0.9);
  });

  it('decides the uncertain subset and the closeness to the bar on the calibrated conf', () => {
    expect(isUncertain(obj(0.9, 'truck'), defaults)).toBe(false);
    expect(isUncertain(obj(0.9, 'truck'), calibrated)).toBe(true);
    expect(distanceToAutoAccept(obj(0.9, 'truck'), calibrated)).toBeCloseTo(0.3);
  });

  it('carries the calibration through resolvePolicy', () => {
    expect(resolvePolicy({ auto_accept_conf: 0.7 }, calibrated).calibration).toBe(overconfident);
  });

  it('makes routing form from a fit: class maps by name for classes with their own fit only', () => {
    const samples: CalibrationSample[] = [];
    for (let i = 0; i < 30; i++) samples.push({ class_id: 3, conf: 0.9, correct: i % 2 === 0 });
    for (let i = 0; i < 5; i++) samples.push({ class_id: 7, conf: 0.6, correct: true });
    const fit = fitCalibration(samples, 'temperature');
    const r = routingCalibration(
      'cal-2',
      fit,
      new Map([
        [3, 'car'],
        [7, 'bus'],
      ]),
    );
    expect(Object.keys(r.classes)).toEqual(['car']);
    expect(r).toMatchObject({ calibration_id: 'cal-2', method: 'temperature', global: fit.global });
  });

  it('lets threshold fits move once fitted on calibrated confidences', () => {
    // 40 verdicts at raw 0.9 (right 50%) and 40 at raw 0.95 (all right): the raw fit puts the bar
    // at 0.95; on calibrated confidences the same verdicts put it where the calibrated 0.95 lands.
    const judged = [
      ...Array.from({ length: 40 }, (_, i) => ({ className: 'truck', conf: 0.9, correct: i % 2 === 0 })),
      ...Array.from({ length: 40 }, () => ({ className: 'truck', conf: 0.95, correct: true })),
    ];
    const raw = fitThresholds(judged, 0.9).classes.truck!;
    const cal: RoutingCalibration = {
      ...overconfident,
      global: { method: 'isotonic', x: [0.9, 0.95], y: [0.5, 0.97] },
    };
    const onCalibrated = fitThresholds(
      judged.map((j) => ({ ...j, conf: calibratedConf(cal, j.className, j.conf) })),
      0.9,
    ).classes.truck!;
    expect(raw.threshold).toBe(0.95);
    expect(onCalibrated.threshold).toBeCloseTo(0.97);
  });
});

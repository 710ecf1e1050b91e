import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors';
import {
  applyCalibration,
  applyMap,
  type CalibrationSample,
  calibrationReport,
  fitCalibration,
  fitIsotonic,
  fitTemperature,
  type Reliability,
  reliability,
} from './calibration';

// Reference numbers: tools/reference/stats_reference.py (sklearn IsotonicRegression, scipy
// minimize_scalar on the same NLL, numpy ECE).
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8'));
const { samples, probe }: { samples: CalibrationSample[]; probe: number[] } =
  fixture('calibration.input.json');
const ref = fixture('calibration.reference.json');

/** The spec's tolerance on T: scipy's bounded Brent stops within about 1.5e-8·T of the minimum. */
const T_TOL = 1e-4;
/** Figures that go through a fitted T inherit its difference (about 3e-8 on this fixture); the rest are exact to rounding. */
const AFTER_T_TOL = 1e-6;
const EXACT = 1e-12;

function expectReliability(actual: Reliability, expected: any, tol: number): void {
  expect(Math.abs(actual.ece - expected.ece)).toBeLessThan(tol);
  expect(actual.bins).toHaveLength(10);
  actual.bins.forEach((bin, k) => {
    const e = expected.bins[k];
    expect([bin.lo, bin.hi, bin.count]).toEqual([e.lo, e.hi, e.count]);
    for (const key of ['mean_conf', 'accuracy'] as const) {
      if (e[key] === null) expect(bin[key]).toBeNull();
      else expect(Math.abs(bin[key]! - e[key])).toBeLessThan(tol);
    }
  });
}

describe('temperature scaling', () => {
  const fit = fitCalibration(samples, 'temperature');

  it('fits T globally and per class as scipy.optimize.minimize_scalar does (to 1e-4)', () => {
    const fitted = (m: (typeof fit.classes)[number]['map']) =>
      m.method === 'temperature' ? m.temperature : NaN;
    expect(Math.abs(fitted(fit.global) - ref.global.temperature)).toBeLessThan(T_TOL);
    for (const c of ref.classes.filter((x: any) => x.fit)) {
      const ours = fit.classes.find((x) => x.class_id === c.class_id)!;
      expect(Math.abs(fitted(ours.map) - c.fit.temperature)).toBeLessThan(T_TOL);
    }
  });

  it('applies sigmoid(logit(conf) / T) with conf clipped as the reference does', () => {
    const map = { method: 'temperature' as const, temperature: ref.global.temperature, at_bound: false };
    probe.forEach((conf, i) =>
      expect(Math.abs(applyMap(map, conf) - ref.global.temperature_probe[i])).toBeLessThan(EXACT),
    );
  });

  it('stops at a bound when the verdicts are separated by conf', () => {
    const separated = [0.2, 0.3, 0.7, 0.8].map((conf) => ({ class_id: 0, conf, correct: conf > 0.5 }));
    expect(fitTemperature(separated)).toEqual({ method: 'temperature', temperature: 0.01, at_bound: true });
    const inverted = separated.map((s) => ({ ...s, correct: !s.correct }));
    expect(fitTemperature(inverted)).toEqual({ method: 'temperature', temperature: 100, at_bound: true });
  });
});

describe('isotonic calibration', () => {
  const fit = fitCalibration(samples, 'isotonic');

  it("stores sklearn's breakpoints (X_thresholds_, y_thresholds_) globally and per class", () => {
    const check = (map: (typeof fit.classes)[number]['map'], expected: any) => {
      if (map.method !== 'isotonic') throw new Error('not an isotonic map');
      expect(map.x).toEqual(expected.x);
      expect(map.y).toHaveLength(expected.y.length);
      map.y.forEach((v, i) => expect(Math.abs(v - expected.y[i])).toBeLessThan(EXACT));
    };
    check(fit.global, ref.global.isotonic);
    for (const c of ref.classes.filter((x: any) => x.fit))
      check(fit.classes.find((x) => x.class_id === c.class_id)!.map, c.fit.isotonic);
  });

  it('predicts as sklearn does, clipping outside the fitted range', () => {
    probe.forEach((conf, i) =>
      expect(Math.abs(applyMap(fit.global, conf) - ref.global.isotonic_probe[i])).toBeLessThan(EXACT),
    );
    for (const c of ref.classes.filter((x: any) => x.fit)) {
      probe.forEach((conf, i) =>
        expect(Math.abs(applyCalibration(fit, c.class_id, conf) - c.fit.isotonic_probe[i])).toBeLessThan(
          EXACT,
        ),
      );
    }
  });

  it('pools tied confidences before pooling violators', () => {
    // conf 0.5 seen twice (one right, one wrong) is one point of weight 2 at 0.5.
    const map = fitIsotonic([
      { class_id: 0, conf: 0.2, correct: false },
      { class_id: 0, conf: 0.5, correct: true },
      { class_id: 0, conf: 0.5, correct: false },
      { class_id: 0, conf: 0.9, correct: true },
    ]);
    expect(map).toEqual({ method: 'isotonic', x: [0.2, 0.5, 0.9], y: [0, 0.5, 1] });
    expect(applyMap(map, 0.7)).toBeCloseTo(0.75, 12);
    expect(applyMap(map, 0)).toBe(0);
  });
});

describe('per-class fits', () => {
  it('falls back to the global map below MIN_CONTROL_SAMPLE verdicts and says so', () => {
    for (const method of ['temperature', 'isotonic'] as const) {
      const fit = fitCalibration(samples, method);
      expect(fit.classes.map((c) => [c.class_id, c.samples, c.source])).toEqual(
        ref.classes.map((c: any) => [c.class_id, c.samples, c.source]),
      );
      const small = fit.classes.find((c) => c.source === 'global')!;
      expect(small.map).toEqual(fit.global);
      expect(small.note).toMatch(/12 of the 25 verdicts/);
      expect(applyCalibration(fit, 12345, 0.8)).toBe(applyMap(fit.global, 0.8));
    }
  });
});

describe('calibrationReport', () => {
  const report = calibrationReport(samples);

  it('reliability and ECE before calibration equal numpy (last bin closed, edges k/10)', () => {
    expectReliability(report.before, ref.before, EXACT);
  });

  it('puts a confidence on an edge into the bin it opens, and 1 into the last bin', () => {
    const table = reliability([0, 0.1, 0.3, 0.7, 0.9, 1], [true, true, true, true, true, true]);
    expect(table.bins.map((b) => b.count)).toEqual([1, 1, 0, 1, 0, 0, 0, 1, 0, 2]);
  });

  it('reliability and ECE after each method equal numpy on the reference fits', () => {
    expectReliability(report.methods.isotonic.after, ref.after.isotonic, EXACT);
    expectReliability(report.methods.temperature.after, ref.after.temperature, AFTER_T_TOL);
    expect(report.methods.isotonic.after.ece).toBeLessThan(report.before.ece);
    expect(report.methods.temperature.after.ece).toBeLessThan(report.before.ece);
  });

  it('per-class ECE before and after', () => {
    report.classes.forEach((c, i) => {
      const e = ref.classes[i];
      expect(c.class_id).toBe(e.class_id);
      expect(Math.abs(c.ece_before - e.ece_before)).toBeLessThan(EXACT);
      expect(Math.abs(c.ece_after.isotonic - e.ece_after.isotonic)).toBeLessThan(EXACT);
      expect(Math.abs(c.ece_after.temperature - e.ece_after.temperature)).toBeLessThan(AFTER_T_TOL);
    });
  });

  it('refuses no verdicts and a confidence outside [0, 1]', () => {
    expect(() => calibrationReport([])).toThrow(InputError);
    expect(() => fitTemperature([{ class_id: 0, conf: 1.2, correct: true }])).toThrow(InputError);
    expect(() => fitIsotonic([{ class_id: 0, conf: NaN, correct: true }])).toThrow(InputError);
  });
});

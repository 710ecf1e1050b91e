import {
  fitReport,
  reviewVerdict,
  selectMethod,
  crossValidatedEce,
  MIN_CALIBRATION_SAMPLES,
} from './calibration-fit';
import type { CalibrationSample } from './calibration';

describe('review verdicts as calibration samples', () => {
  const before = { source: 'fused', conf: 0.8, class_id: 3, state: 'review' };
  it('counts a confirm with the class unchanged as right, a reject or a class change as wrong', () => {
    expect(reviewVerdict({ action: 'confirm', before, after: { class_id: 3, state: 'accepted' } })).toEqual({
      class_id: 3,
      conf: 0.8,
      correct: true,
    });
    expect(reviewVerdict({ action: 'accept', before, after: { class_id: 3 } })?.correct).toBe(true);
    expect(
      reviewVerdict({ action: 'reject', before, after: { class_id: 3, state: 'rejected' } })?.correct,
    ).toBe(false);
    expect(
      reviewVerdict({ action: 'confirm', before, after: { class_id: 4, state: 'accepted' } })?.correct,
    ).toBe(false);
    expect(reviewVerdict({ action: 'relabel', before, after: { class_id: 4 } })?.correct).toBe(false);
    expect(
      reviewVerdict({ action: 'confirm', before, after: { class_id: 3, state: 'rejected' } })?.correct,
    ).toBe(false);
  });

  it('ignores what judges no machine proposal', () => {
    expect(
      reviewVerdict({ action: 'confirm', before: { ...before, source: 'human' }, after: {} }),
    ).toBeNull();
    expect(reviewVerdict({ action: 'edit', before, after: { class_id: 3 } })).toBeNull();
    expect(reviewVerdict({ action: 'confirm', before: { ...before, conf: null }, after: {} })).toBeNull();
    expect(reviewVerdict({ action: 'confirm', before: { ...before, conf: 1.5 }, after: {} })).toBeNull();
    expect(reviewVerdict({ action: 'confirm', before: 'nonsense', after: null })).toBeNull();
    // A legacy spelling of a machine source counts.
    expect(
      reviewVerdict({ action: 'confirm', before: { ...before, source: 'interp' }, after: {} })?.correct,
    ).toBe(true);
  });
});

/** Miscalibrated: conf 0.9 is right 60% of the time, conf 0.6 right 20%. */
function miscalibrated(n: number): CalibrationSample[] {
  const out: CalibrationSample[] = [];
  for (let i = 0; i < n; i++) {
    const high = i % 2 === 0;
    out.push({ class_id: 1 + (i % 3), conf: high ? 0.9 : 0.6, correct: high ? i % 10 < 6 : i % 10 === 1 });
  }
  return out;
}

describe('fitting and choosing a method', () => {
  it('lowers ECE on a miscalibrated construction', () => {
    const r = fitReport(miscalibrated(100), null);
    expect(r.samples).toBe(100);
    expect(r.after.ece).toBeLessThan(r.before.ece);
    expect(r.before.ece).toBeGreaterThan(0.2);
    expect(r.classes.map((c) => c.class_id)).toEqual([1, 2, 3]);
    expect(r.classes.every((c) => c.map === 'class')).toBe(true);
  });

  it('picks by cross-validated ECE, deterministically, and keeps the method a caller asks for', () => {
    const samples = miscalibrated(60);
    const chosen = selectMethod(samples, null);
    expect(chosen.by).toBe('cross_validation');
    expect(chosen.cv_ece).toEqual({
      temperature: crossValidatedEce(samples, 'temperature'),
      isotonic: crossValidatedEce(samples, 'isotonic'),
    });
    expect(chosen.chosen).toBe(
      chosen.cv_ece!.isotonic < chosen.cv_ece!.temperature - 1e-12 ? 'isotonic' : 'temperature',
    );
    expect(selectMethod(samples, null)).toEqual(chosen);
    expect(selectMethod(samples, 'isotonic')).toMatchObject({
      chosen: 'isotonic',
      by: 'request',
      cv_ece: null,
    });
    expect(fitReport(samples, 'temperature')).toMatchObject({
      method: 'temperature',
      fit: { method: 'temperature' },
    });
  });

  it('needs the spec minimum sample', () => {
    expect(MIN_CALIBRATION_SAMPLES).toBe(25);
  });
});

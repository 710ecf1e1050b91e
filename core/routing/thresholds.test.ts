import { fitPolicyDefaults, fitThreshold, fitThresholds, type JudgedObject } from './thresholds';

/** `n` verdicts at confidences spread evenly in [lo, hi], correct where `correct(conf)` says. */
const judged = (
  className: string,
  n: number,
  lo: number,
  hi: number,
  correct: (conf: number) => boolean,
): JudgedObject[] =>
  Array.from({ length: n }, (_, i) => {
    const conf = Math.round((lo + ((hi - lo) * i) / Math.max(1, n - 1)) * 1000) / 1000;
    return { className, conf, correct: correct(conf) };
  });

describe('fitThreshold', () => {
  it('finds the lowest confidence whose objects above it reach the target precision, with at least 25 verdicts', () => {
    // Right from 0.6 up, wrong below: 60 verdicts over [0.3, 0.95].
    const js = judged('car', 60, 0.3, 0.95, (c) => c >= 0.6);
    const f = fitThreshold(js, 0.9);
    expect(f.status).toBe('fitted');
    const above = js.filter((j) => j.conf >= f.threshold!);
    // What it reports is what the verdicts say at that threshold, smoothed.
    expect(f.at_threshold).toEqual({
      judged: above.length,
      correct: above.filter((j) => j.correct).length,
      precision: (above.filter((j) => j.correct).length + 1) / (above.length + 2),
    });
    expect(f.at_threshold!.precision).toBeGreaterThanOrEqual(0.9);
    // No lower threshold reaches the target: it is the lowest.
    for (const t of new Set(js.filter((j) => j.conf < f.threshold!).map((j) => j.conf))) {
      const at = js.filter((j) => j.conf >= t);
      expect((at.filter((j) => j.correct).length + 1) / (at.length + 2)).toBeLessThan(0.9);
    }
    expect(f.threshold!).toBeLessThanOrEqual(0.6);
    expect(f.coverage).toBeCloseTo(above.length / 60);
  });

  it('keeps every object of one confidence on the same side of the threshold', () => {
    const js = [...judged('car', 30, 0.9, 0.9, () => true), ...judged('car', 10, 0.5, 0.5, () => false)];
    const f = fitThreshold(js, 0.9);
    expect(f).toMatchObject({ status: 'fitted', threshold: 0.9, at_threshold: { judged: 30, correct: 30 } });
  });

  it('says insufficient below 25 verdicts and unreachable when no threshold reaches the target', () => {
    expect(
      fitThreshold(
        judged('car', 24, 0.5, 0.99, () => true),
        0.9,
      ),
    ).toMatchObject({ status: 'insufficient', threshold: null, reason: expect.stringMatching(/24 verdict/) });
    expect(
      fitThreshold(
        judged('car', 40, 0.5, 0.99, (c) => c < 0.8),
        0.9,
      ),
    ).toMatchObject({ status: 'unreachable', threshold: null });
    // 25 all-correct verdicts smooth to 26/27 = 0.963: a 0.97 target needs more evidence.
    expect(
      fitThreshold(
        judged('car', 25, 0.5, 0.99, () => true),
        0.97,
      ).status,
    ).toBe('unreachable');
    expect(
      fitThreshold(
        judged('car', 25, 0.5, 0.99, () => true),
        0.96,
      ).status,
    ).toBe('fitted');
  });
});

describe('fitThresholds and the policy they give', () => {
  it('fits each class and all classes together, and turns them into routing defaults', () => {
    const js = [
      ...judged('car', 50, 0.4, 0.99, (c) => c >= 0.55),
      ...judged('bus', 30, 0.4, 0.99, (c) => c < 0.5),
      ...judged('bicycle', 5, 0.9, 0.99, () => true),
    ];
    const fit = fitThresholds(js, 0.9);
    expect(Object.keys(fit.classes)).toEqual(['bicycle', 'bus', 'car']);
    expect(fit.classes.car!.status).toBe('fitted');
    expect(fit.classes.bus!.status).toBe('unreachable');
    expect(fit.classes.bicycle!.status).toBe('insufficient');
    expect(fit.global.judged).toBe(85);
    const policy = fitPolicyDefaults(fit);
    expect(policy.class_thresholds).toEqual({ car: fit.classes.car!.threshold, bus: null });
    expect(policy.auto_accept_conf).toBe(fit.global.status === 'fitted' ? fit.global.threshold : null);
  });
});

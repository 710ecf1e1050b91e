import {
  CONTROL_RATE,
  controlDraw,
  isControlSample,
  laplacePrecision,
  MIN_CONTROL_SAMPLE,
  precisionReport,
} from '.';

describe('control sample selection', () => {
  const keys = Array.from({ length: 20000 }, (_, i) => `al:job:frame${i >> 4}:${i & 15}`);

  it('is reproducible for a seed and differs between seeds', () => {
    const a = keys.filter((k) => isControlSample(7, k));
    expect(keys.filter((k) => isControlSample(7, k))).toEqual(a);
    const b = keys.filter((k) => isControlSample(8, k));
    expect(b).not.toEqual(a);
  });

  it('takes about 2% of objects', () => {
    const share = keys.filter((k) => isControlSample(12345, k)).length / keys.length;
    expect(CONTROL_RATE).toBe(0.02);
    expect(share).toBeGreaterThan(0.017);
    expect(share).toBeLessThan(0.023);
    for (const k of keys.slice(0, 100)) {
      const d = controlDraw(1, k);
      expect(d).toBeGreaterThanOrEqual(0);
      expect(d).toBeLessThan(1);
    }
  });
});

describe('precision report', () => {
  const rec = (verdict: string | null, checks = ['geometric', 'relationship']) => ({ verdict, checks });

  it('is not yet measurable below 25 reviewed controls, naming the controls that await review', () => {
    const r = precisionReport(
      [...Array.from({ length: 24 }, () => rec('correct')), rec(null), rec(null)],
      ['geometric'],
    );
    expect(MIN_CONTROL_SAMPLE).toBe(25);
    expect(r.status).toBe('not_yet_measurable');
    expect(r.precision).toBeNull();
    expect(r.reason).toMatch(/24 of the 25.*2 controls await review/);
  });

  it('reports Laplace-smoothed precision from 25 reviewed, per check as well', () => {
    const records = [
      ...Array.from({ length: 27 }, () => rec('correct')),
      rec('wrong_class'),
      rec('false_positive', ['geometric']),
      rec(null),
    ];
    const r = precisionReport(records, ['geometric', 'relationship', 'temporal']);
    expect(r.status).toBe('measured');
    expect(r.reviewed).toBe(29);
    expect(r.pending).toBe(1);
    expect(r.precision).toBeCloseTo(28 / 31);
    expect(r.by_check.geometric!.precision).toBeCloseTo(laplacePrecision(27, 29));
    expect(r.by_check.relationship!.reviewed).toBe(28);
    expect(r.by_check.temporal!.status).toBe('not_yet_measurable');
  });
});

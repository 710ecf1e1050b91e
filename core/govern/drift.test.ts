import inputs from './fixtures/drift.input.json';
import reference from './fixtures/drift.reference.json';
import {
  chiSquareHomogeneity,
  compareDrift,
  kolmogorovSf,
  ksStatistic,
  ksTwoSample,
  smirnovSf,
  type Counts,
  type DriftSample,
} from './drift';

// Reference numbers: tools/reference/drift_reference.py (scipy.stats chi2_contingency and
// ks_2samp(method='asymp'), scipy 1.17.1).
const close = (ours: number, theirs: number, relative = 1e-9) =>
  expect(Math.abs(ours - theirs)).toBeLessThanOrEqual(relative * Math.abs(theirs) + 1e-15);
/**
 * Where scipy itself approximates (large n, n·d² < 2.2: the Pelz–Good expansion) our exact
 * Marsaglia–Tsang–Wang CDF is the better number; the two agree to a few parts in 10⁷ there.
 */
const PELZ_GOOD = 1e-6;

/** The chi-square cases: JSON gives each its own literal type, absent categories included. */
const chi2Cases = inputs.chi2 as unknown as Array<{ name: string; a: Counts; b: Counts }>;

describe('chiSquareHomogeneity', () => {
  it.each(chi2Cases.map((c, i) => [c.name, c, reference.chi2[i]!] as const))(
    'equals scipy chi2_contingency: %s',
    (_name, c, ref) => {
      const r = chiSquareHomogeneity(c.a, c.b)!;
      expect(r.categories).toEqual(ref.categories);
      expect(r.df).toBe(ref.df);
      close(r.statistic, ref.statistic);
      close(r.pValue, ref.p_value);
    },
  );

  it('is no test with fewer than two categories, or a side that saw none of them', () => {
    expect(chiSquareHomogeneity({ car: 5 }, { car: 9 })).toBeNull();
    expect(chiSquareHomogeneity({ car: 5, bus: 0 }, { car: 0, bus: 0 })).toBeNull();
  });
});

describe('ksTwoSample', () => {
  it.each(inputs.ks.map((c, i) => [c.name, c, reference.ks[i]!] as const))(
    'equals scipy ks_2samp(method="asymp"): %s',
    (_name, c, ref) => {
      const r = ksTwoSample(c.x, c.y);
      close(r.statistic, ref.statistic);
      close(r.pValue, ref.p_value, c.name.includes('Pelz-Good') ? PELZ_GOOD : 1e-9);
    },
  );

  it('gives the edge values of the distributions', () => {
    expect(kolmogorovSf(10, 1)).toBe(0);
    expect(kolmogorovSf(10, 0.04)).toBe(1); // n·d ≤ 0.5: every sample is that far
    // One observation: P(D1+ ≥ d) = 1 − d, and the two-sided statistic is the larger side.
    close(smirnovSf(1, 0.3), 0.7);
    close(kolmogorovSf(1, 0.7), 2 * 0.3);
  });

  it('steps over ties on both sides at once', () => {
    // Both CDFs jump at 1 together: the largest gap is after 2, not inside the tie.
    expect(ksStatistic([1, 1, 2], [1, 3, 3])).toBeCloseTo(2 / 3, 12);
    expect(ksStatistic([5, 5], [5, 5, 5])).toBe(0);
  });
});

describe('compareDrift', () => {
  const sample = (over: Partial<DriftSample> = {}): DriftSample => ({
    classes: {},
    context: {},
    confidence: [],
    image: { brightness: [], sharpness: [] },
    ...over,
  });
  const ks = inputs.ks[0]!;

  it('tests every measurable feature against alpha over the number of tests, and names the ones it cannot test', () => {
    const reference = sample({
      classes: { car: 120, person: 80 },
      context: { lighting: { normal: 40 }, weather: { clear: 30, rain: 10 } },
      confidence: ks.x,
      image: { brightness: ks.x, sharpness: [1, 2, 3] },
    });
    const recent = sample({
      classes: { car: 90, person: 110 },
      context: { lighting: { normal: 40 }, weather: { clear: 31, rain: 9 } },
      confidence: ks.y,
      image: { brightness: ks.y, sharpness: [4, 5, 6] },
    });
    const out = compareDrift(reference, recent, { alpha: 0.05, minSamples: 30 });
    expect(out.findings.map((f) => f.feature)).toEqual([
      'classes',
      'context.weather',
      'confidence',
      'image.brightness',
    ]);
    expect(out.threshold).toBeCloseTo(0.05 / 4, 15);
    expect(out.not_measurable.map((n) => [n.feature, n.reason])).toEqual([
      ['context.lighting', 'fewer than two categories observed'],
      ['image.sharpness', 'fewer than 30 observations on a side'],
    ]);
    // p = 0.0037 on the classes: under 0.05 / 4, so drift; the same p against 0.05 / 100 tests would not be.
    const classes = out.findings.find((f) => f.feature === 'classes')!;
    close(classes.p_value, reference_p('two categories (Yates)'));
    expect(classes.drifted).toBe(true);
    expect(out.findings.find((f) => f.feature === 'context.weather')!.drifted).toBe(false);
    for (const f of out.findings) expect(f.drifted).toBe(f.p_value < out.threshold);
  });

  it('calls identical sides no drift', () => {
    const side = sample({
      classes: { car: 50, bus: 50 },
      confidence: ks.x,
      image: { brightness: ks.x, sharpness: ks.x },
    });
    const out = compareDrift(side, side, { alpha: 0.01, minSamples: 30 });
    expect(out.findings).toHaveLength(4);
    expect(out.findings.every((f) => !f.drifted && f.statistic === 0)).toBe(true);
  });
});

function reference_p(name: string): number {
  return reference.chi2.find((c) => c.name === name)!.p_value;
}

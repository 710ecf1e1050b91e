import fs from 'node:fs';
import path from 'node:path';
import { InputError } from '../errors';
import { bootstrapFrames } from './resample';
import {
  bootstrapInterval,
  bootstrapStatistic,
  erfc,
  normalQuantile,
  pairedSignificance,
  resampleIndices,
  wilsonInterval,
} from './stats';

// Reference numbers: tools/reference/stats_reference.py (statsmodels, scipy, numpy).
const fixture = (name: string) => JSON.parse(fs.readFileSync(path.join(__dirname, 'fixtures', name), 'utf8'));
const input = fixture('stats.input.json');
const ref = fixture('stats.reference.json');

const relErr = (a: number, b: number) => (a === b ? 0 : Math.abs(a - b) / Math.max(Math.abs(a), Math.abs(b)));

describe('the normal distribution', () => {
  it('erfc matches scipy.special.erfc to 1e-14 relative over the whole line', () => {
    input.erfc_x.forEach((x: number, i: number) => expect(relErr(erfc(x), ref.erfc[i])).toBeLessThan(1e-14));
  });

  it('normalQuantile matches scipy.special.ndtri to 1e-14 relative, tails included', () => {
    input.ndtri_p.forEach((p: number, i: number) =>
      expect(relErr(normalQuantile(p), ref.ndtri[i])).toBeLessThan(1e-14),
    );
    expect(normalQuantile(0)).toBe(-Infinity);
    expect(normalQuantile(1)).toBe(Infinity);
  });
});

describe('wilsonInterval', () => {
  const cases: Array<[number, number, number, any]> = ref.wilson.map((w: any) => [
    w.successes,
    w.n,
    w.alpha,
    w,
  ]);
  it.each(cases)('%i of %i at alpha %f equals statsmodels', (successes, n, alpha, w) => {
    const r = wilsonInterval(successes, n, alpha);
    expect(Math.abs(r.lo - w.lo)).toBeLessThan(1e-12);
    expect(Math.abs(r.hi - w.hi)).toBeLessThan(1e-12);
    expect(r.proportion).toBe(successes / n);
  });

  it('refuses counts that are not a proportion', () => {
    expect(() => wilsonInterval(3, 0)).toThrow(InputError);
    expect(() => wilsonInterval(4, 3)).toThrow(InputError);
    expect(() => wilsonInterval(1.5, 3)).toThrow(InputError);
    expect(() => wilsonInterval(1, 3, 1)).toThrow(InputError);
  });
});

describe('bootstrap', () => {
  const pc = input.percentile;

  it('draws the committed resample indices (a change of RNG stream shows here first)', () => {
    expect(Array.from(resampleIndices(pc.values.length, { nBoot: pc.n_boot, seed: pc.seed }))).toEqual(
      pc.indices,
    );
  });

  it("percentiles of our resamples' means equal numpy's method='linear' to 1e-9", () => {
    const r = bootstrapInterval(pc.values, { nBoot: pc.n_boot, seed: pc.seed, alpha: pc.alpha });
    expect(ref.percentile.method).toBe('linear');
    expect(Math.abs(r.lo - ref.percentile.lo)).toBeLessThan(1e-9);
    expect(Math.abs(r.hi - ref.percentile.hi)).toBeLessThan(1e-9);
    expect(Math.abs(r.mean - ref.percentile.mean)).toBeLessThan(1e-12);
    expect(r).toMatchObject({ n: pc.values.length, n_boot: pc.n_boot, seed: pc.seed, alpha: pc.alpha });
  });

  it("agrees with scipy.stats.bootstrap(method='percentile') within Monte-Carlo error", () => {
    // Different RNGs: two estimates of the same percentiles. The allowance is 4·√2 times the spread
    // of scipy's bounds over 30 seeds at the same n_resamples (the script measures it).
    const bs = input.bootstrap;
    const r = bootstrapInterval(bs.values, { nBoot: bs.n_boot, seed: bs.seed, alpha: bs.alpha });
    expect(Math.abs(r.lo - ref.bootstrap.lo)).toBeLessThan(ref.bootstrap.tol_lo);
    expect(Math.abs(r.hi - ref.bootstrap.hi)).toBeLessThan(ref.bootstrap.tol_hi);
  });

  it('is reproducible from its seed, and another seed draws other resamples', () => {
    const values = input.bootstrap.values;
    expect(bootstrapInterval(values, { seed: 5 })).toEqual(bootstrapInterval(values, { seed: 5 }));
    expect(bootstrapInterval(values, { seed: 6 }).lo).not.toBe(bootstrapInterval(values, { seed: 5 }).lo);
    expect(bootstrapInterval(values)).toMatchObject({
      alpha: 0.05,
      n_boot: 2000,
      seed: 12345,
      n: values.length,
    });
  });

  it("draws the same resamples as ./resample's bootstrapFrames for the same seed", () => {
    const n = 9;
    const rows = resampleIndices(n, { nBoot: 20, seed: 77 });
    bootstrapFrames(n, 20, 77).forEach((counts, b) => {
      const tally = new Uint32Array(n);
      for (const i of rows.subarray(b * n, (b + 1) * n)) tally[i]!++;
      expect(Array.from(tally)).toEqual(Array.from(counts));
    });
  });

  it('bootstrapStatistic recomputes a ratio per resample and leaves out undefined ones', () => {
    // Per-image true positives and detections; precision is the ratio of the sums.
    const tp = [0, 3, 1, 0, 2];
    const det = [0, 4, 2, 0, 2];
    const precision = (idx: Uint32Array) => {
      let t = 0;
      let d = 0;
      for (const i of idx) {
        t += tp[i]!;
        d += det[i]!;
      }
      return t / d;
    };
    const r = bootstrapStatistic(5, precision, { nBoot: 4000, seed: 3 });
    expect(r.estimate).toBeCloseTo(6 / 8, 12);
    // A resample of images 0 and 3 only has no detections: (2/5)^5 ≈ 1% of 4000.
    expect(r.n_undefined).toBeGreaterThan(10);
    expect(r.n_undefined).toBeLessThan(90);
    expect(r.lo!).toBeLessThan(r.estimate!);
    expect(r.hi!).toBeGreaterThanOrEqual(r.estimate!);
    const never = bootstrapStatistic(3, () => NaN, { nBoot: 10 });
    expect(never).toMatchObject({ estimate: null, lo: null, hi: null, n_undefined: 10 });
  });

  it('refuses empty or non-finite values and bad options', () => {
    expect(() => bootstrapInterval([])).toThrow(InputError);
    expect(() => bootstrapInterval([1, NaN])).toThrow(InputError);
    expect(() => bootstrapInterval([1, 2], { alpha: 0 })).toThrow(InputError);
    expect(() => bootstrapInterval([1, 2], { nBoot: 0 })).toThrow(InputError);
    expect(() => bootstrapInterval([1, 2], { seed: -1 })).toThrow(InputError);
    expect(() => bootstrapInterval([1, 2], { seed: 2 ** 32 })).toThrow(InputError);
  });
});

describe('pairedSignificance', () => {
  const cases: Array<[string, any, any]> = input.wilcoxon.map((c: any, i: number) => [
    c.name,
    c,
    ref.wilcoxon[i],
  ]);
  it.each(cases)('Wilcoxon %s equals scipy (wilcox zeros, no correction, asymptotic)', (_name, c, w) => {
    const r = pairedSignificance(c.a, c.b, { nBoot: 200 }).wilcoxon;
    expect(r.statistic).toBe(w.statistic);
    if (w.p_value === null) {
      expect(r.p_value).toBeNull();
      expect(r.z).toBeNull();
    } else {
      expect(relErr(r.p_value!, w.p_value)).toBeLessThan(1e-12);
      expect(Math.abs(-Math.abs(r.z!) - w.zstatistic)).toBeLessThan(1e-12);
    }
  });

  it('enumerates every sign flip when 2^n ≤ nPerm: the exact p of scipy.stats.permutation_test', () => {
    const pe = input.permutation_exact;
    const r = pairedSignificance(pe.a, pe.b, { nPerm: pe.n_perm, seed: pe.seed });
    expect(r.permutation.exact).toBe(true);
    expect(r.permutation.n_perm).toBe(2 ** pe.a.length);
    expect(Math.abs(r.permutation.p_value - ref.permutation_exact.p_value)).toBeLessThan(1e-12);
  });

  it('draws sign flips otherwise, within Monte-Carlo error of the exact p', () => {
    const pm = input.permutation_mc;
    const r = pairedSignificance(pm.a, pm.b, { nPerm: pm.n_perm, seed: pm.seed });
    expect(r.permutation.exact).toBe(false);
    expect(Math.abs(r.permutation.p_value - ref.permutation_mc.exact_p_value)).toBeLessThan(
      ref.permutation_mc.tol,
    );
    expect(pairedSignificance(pm.a, pm.b, { nPerm: pm.n_perm, seed: pm.seed })).toEqual(r);
  });

  it('reports the mean difference a - b with its bootstrap interval', () => {
    const a = [0.5, 0.7, 0.9, 0.6];
    const b = [0.4, 0.7, 0.6, 0.5];
    const r = pairedSignificance(a, b, { seed: 4 });
    expect(r.mean_difference.mean).toBeCloseTo(0.125, 12);
    expect(r.mean_difference).toEqual(
      bootstrapInterval(
        a.map((x, i) => x - b[i]!),
        { seed: 4 },
      ),
    );
  });

  it('refuses runs of different lengths', () => {
    expect(() => pairedSignificance([1, 2], [1])).toThrow(InputError);
    expect(() => pairedSignificance([1], [1], { nPerm: 0 })).toThrow(InputError);
  });
});

import kstest from '@stdlib/stats-kstest';
import { betaMean, betaSampler, betaSd } from './beta';

const draws = (n: number, draw: () => number) => Array.from({ length: n }, draw);
const mean = (xs: number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;

describe('the seeded Beta sampler', () => {
  it.each([
    [1, 1],
    [2, 5],
    [0.5, 0.5],
    [30, 3],
    [1.7, 0.3],
  ])('Beta(%p, %p) draws pass a Kolmogorov–Smirnov test against the Beta CDF', (a, b) => {
    const sample = betaSampler(7);
    const xs = draws(4000, () => sample(a, b));
    expect(xs.every((x) => x >= 0 && x <= 1)).toBe(true);
    expect(kstest(xs, 'beta', a, b).pValue).toBeGreaterThan(0.01);
    expect(Math.abs(mean(xs) - betaMean(a, b))).toBeLessThan(4 * (betaSd(a, b) / Math.sqrt(xs.length)));
  });

  it('is reproducible from the seed, and differs between seeds (a zero or negative seed included)', () => {
    const [a, b, c] = [betaSampler(3), betaSampler(3), betaSampler(4)];
    const first = draws(10, () => a(2, 3));
    expect(draws(10, () => b(2, 3))).toEqual(first);
    expect(draws(10, () => c(2, 3))).not.toEqual(first);
    expect(Number.isFinite(betaSampler(0)(2, 3))).toBe(true);
    expect(Number.isFinite(betaSampler(-5.5)(2, 3))).toBe(true);
  });

  it('knows the Beta moments', () => {
    expect(betaMean(2, 6)).toBe(0.25);
    expect(betaSd(1, 1)).toBeCloseTo(Math.sqrt(1 / 12), 12);
  });
});

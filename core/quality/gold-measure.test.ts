import { RefusedError } from '../errors';
import { measureAgainstGold, MEASURE_DEFAULTS, type GoldBox, type PredictedBox } from './gold-measure';
import { bootstrapFrames, percentileInterval, quantileSorted } from './resample';

const g = (frame_id: string, class_id: number, x: number): GoldBox => ({
  frame_id,
  class_id,
  bbox: [x, 0, x + 10, 10],
});
const p = (frame_id: string, class_id: number, x: number, conf: number | null): PredictedBox => ({
  frame_id,
  class_id,
  conf,
  bbox: [x, 0, x + 10, 10],
});

describe('measureAgainstGold', () => {
  const frames = ['f1', 'f2'];
  const gold = [g('f1', 1, 0), g('f1', 1, 50), g('f2', 1, 0), g('f2', 2, 0)];
  // Class 1: a hit at 0.9, a miss (x=100) at 0.8, a hit at 0.7 (f2), a duplicate of f1's first box at 0.6.
  const preds = [
    p('f1', 1, 0, 0.9),
    p('f1', 1, 100, 0.8),
    p('f2', 1, 1, 0.7),
    p('f1', 1, 0, 0.6),
    p('f2', 3, 0, 0.5),
  ];
  const m = measureAgainstGold(gold, preds, frames, { ...MEASURE_DEFAULTS, n_boot: 200 });

  it('counts matches once per gold box, by COCO greedy matching in confidence order', () => {
    const c1 = m.classes.find((c) => c.class_id === 1)!;
    expect([c1.gold, c1.predicted, c1.true_positives, c1.false_positives, c1.false_negatives]).toEqual([
      3, 4, 2, 2, 1,
    ]);
    expect(c1.precision).toBeCloseTo(0.5);
    expect(c1.recall).toBeCloseTo(2 / 3);
    // PR points: (1/3, 1), (1/3, 1/2), (2/3, 2/3), (2/3, 1/2): interpolated precision is 1 up to
    // recall 1/3 (34 points: 0..0.33) and 2/3 up to 2/3 (33 points: 0.34..0.66), then 0.
    expect(c1.ap).toBeCloseTo((34 * 1 + 33 * (2 / 3)) / 101, 12);
    const c2 = m.classes.find((c) => c.class_id === 2)!;
    expect([c2.gold, c2.predicted, c2.recall, c2.ap, c2.precision]).toEqual([1, 0, 0, 0, null]);
    expect(m.classes_without_gold).toEqual([3]);
    expect(m.map).toBeCloseTo((c1.ap! + 0) / 2, 12);
    expect(m.precision).toBeCloseTo(2 / 5);
    expect(m.recall).toBeCloseTo(2 / 4);
    expect(c1.below_min_sample).toBe(true);
  });

  it('gives the same intervals for the same seed, other intervals for another, around the point value', () => {
    const many = Array.from({ length: 40 }, (_, i) => `f${i}`);
    const gold40 = many.flatMap((f, i) => [g(f, 1, 0), ...(i % 3 ? [g(f, 1, 50)] : [])]);
    const preds40 = many.flatMap((f, i) => [
      p(f, 1, i % 4 ? 0 : 200, 0.5 + i / 100),
      p(f, 1, 300, 0.3 + (i % 7) / 20),
    ]);
    const opts = { ...MEASURE_DEFAULTS, n_boot: 300 };
    const a = measureAgainstGold(gold40, preds40, many, opts);
    expect(measureAgainstGold(gold40, preds40, many, opts)).toEqual(a);
    const b = measureAgainstGold(gold40, preds40, many, { ...opts, seed: 7 });
    expect(b.classes[0]!.ap_ci).not.toEqual(a.classes[0]!.ap_ci);
    for (const [value, ci] of [
      [a.recall, a.recall_ci],
      [a.precision, a.precision_ci],
      [a.map, a.map_ci],
    ] as const) {
      expect(ci.lo!).toBeLessThan(value!);
      expect(ci.hi!).toBeGreaterThan(value!);
    }
  });

  it('refuses a run without confidences (reconstructed) by name', () => {
    expect(() => measureAgainstGold(gold, [p('f1', 1, 0, null)], frames)).toThrow(RefusedError);
    expect(() => measureAgainstGold(gold, [p('f1', 1, 0, null)], frames)).toThrow(/reconstructed/);
  });

  it('ignores predictions on frames outside the gold set', () => {
    const out = measureAgainstGold(gold, [...preds, p('f9', 1, 0, 0.99)], frames, {
      ...MEASURE_DEFAULTS,
      n_boot: 10,
    });
    expect(out.predicted).toBe(m.predicted);
  });
});

describe('resampling', () => {
  it('draws n items per replicate, reproducibly', () => {
    const a = bootstrapFrames(50, 20, 3);
    expect(a).toHaveLength(20);
    for (const counts of a) expect(counts.reduce((s, v) => s + v, 0)).toBe(50);
    expect(bootstrapFrames(50, 20, 3)).toEqual(a);
    expect(bootstrapFrames(50, 20, 4)).not.toEqual(a);
  });

  it('interpolates quantiles like numpy', () => {
    // numpy.percentile([1, 2, 3, 4], [2.5, 50, 97.5]) == [1.075, 2.5, 3.925]
    const s = Float64Array.from([1, 2, 3, 4]);
    expect(quantileSorted(s, 0.025)).toBeCloseTo(1.075, 12);
    expect(quantileSorted(s, 0.5)).toBeCloseTo(2.5, 12);
    expect(percentileInterval([4, 1, 3, 2], 0.05)).toEqual({
      lo: expect.closeTo(1.075, 12),
      hi: expect.closeTo(3.925, 12),
    });
  });
});

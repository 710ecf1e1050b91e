import { z } from 'zod';
import { expandGrid, GridIn, MAX_SWEEP_POINTS, rankSweep, sweepChildId, sweepValue } from './sweep';

const base = {
  epochs: 3,
  learning_rate: 0.01,
  batch_size: 64,
  heads: ['cls' as const, 'obj' as const],
  anchor_l2: 1,
  seed: 0,
};

describe('expandGrid', () => {
  it('runs every combination over the base, parameters by name and values as given', () => {
    const out = expandGrid(base, { learning_rate: [0.1, 0.01], epochs: [2, 4] });
    if (!out.ok) throw new Error(JSON.stringify(out.errors));
    expect(out.points.map((p) => p.values)).toEqual([
      { epochs: 2, learning_rate: 0.1 },
      { epochs: 2, learning_rate: 0.01 },
      { epochs: 4, learning_rate: 0.1 },
      { epochs: 4, learning_rate: 0.01 },
    ]);
    expect(out.points[3]!.config).toEqual({ ...base, epochs: 4, learning_rate: 0.01 });
  });

  it('names each value the config refuses, repeated values and grids over the limit', () => {
    const bad = expandGrid(base, { learning_rate: [0.1, -1], batch_size: [8, 8], heads: [['box']] });
    expect(bad.ok).toBe(false);
    if (bad.ok) return;
    const fields = bad.errors.map((e) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining(['grid.learning_rate.1', 'grid.batch_size', 'grid.heads.0']),
    );
    expect(fields).not.toContain('grid.learning_rate.0');
    const seeds = Array.from({ length: MAX_SWEEP_POINTS + 1 }, (_, i) => i);
    const big = expandGrid(base, { seed: seeds.slice(0, 9), epochs: [1, 2] });
    expect(big.ok).toBe(false);
    if (!big.ok)
      expect(big.errors).toEqual([{ field: 'grid', message: expect.stringMatching(/18 combinations/) }]);
  });

  it('takes only training-config parameters, at least one', () => {
    expect(GridIn.safeParse({ momentum: [0.9] }).success).toBe(false);
    expect(GridIn.safeParse({}).success).toBe(false);
    expect(z.toJSONSchema(GridIn)).toBeTruthy();
  });
});

describe('rankSweep', () => {
  const child = (jobId: string, status: string, value: number | null) => ({ jobId, status, value });

  it('ranks completed children with a value, best first by the direction of the metric; the rest follow unranked', () => {
    const children = [
      child('a', 'completed', 0.3),
      child('b', 'failed', null),
      child('c', 'completed', 0.5),
      child('d', 'running', 0.9),
    ];
    expect(rankSweep(children, 'map50').map((c) => [c.jobId, c.rank])).toEqual([
      ['c', 1],
      ['a', 2],
      ['b', null],
      ['d', null],
    ]);
    expect(rankSweep(children, 'val_loss').map((c) => [c.jobId, c.rank])).toEqual([
      ['a', 1],
      ['c', 2],
      ['b', null],
      ['d', null],
    ]);
  });

  it('keeps the given order between equal values', () => {
    expect(
      rankSweep([child('x', 'completed', 0.4), child('y', 'completed', 0.4)], 'map50').map((c) => c.jobId),
    ).toEqual(['x', 'y']);
  });
});

describe('sweep children', () => {
  it('have ids that are UUIDs derived from the sweep and the point', () => {
    const id = sweepChildId('7d1c2a9e-3a44-4d1e-9c51-3a8f2f0b1c2d', 0);
    expect(z.uuid().safeParse(id).success).toBe(true);
    expect(sweepChildId('7d1c2a9e-3a44-4d1e-9c51-3a8f2f0b1c2d', 0)).toBe(id);
    expect(sweepChildId('7d1c2a9e-3a44-4d1e-9c51-3a8f2f0b1c2d', 1)).not.toBe(id);
  });

  it("read the metric from the trained model's metrics or the last epoch", () => {
    const job = { metrics: { trained: { map50: 0.42 } }, progress: { val_loss: 1.5 } };
    expect(sweepValue('map50', job)).toBe(0.42);
    expect(sweepValue('val_loss', job)).toBe(1.5);
    expect(sweepValue('map50', { metrics: {}, progress: {} })).toBeNull();
  });
});

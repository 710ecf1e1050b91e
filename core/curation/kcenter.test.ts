import { kCenterGreedy, kCenterPicks } from './kcenter';

const point = (id: string, ...vector: number[]) => ({ id, vector });

/** Covering radius of a set of centres: the largest distance of a point to its nearest centre. */
function radiusOf(points: Array<{ vector: number[] }>, centres: Array<{ vector: number[] }>): number {
  const d = (a: number[], b: number[]) => Math.hypot(...a.map((x, i) => x - b[i]!));
  return Math.max(...points.map((p) => Math.min(...centres.map((c) => d(p.vector, c.vector)))));
}

describe('k-center greedy', () => {
  const line = [point('a', 0), point('b', 1), point('c', 2), point('d', 10), point('e', 4)];

  it('starts farthest from the mean, then always takes the point farthest from every pick', () => {
    // mean 3.4: d (10) is farthest; then a (10 from d); then e (4 from a, 6 from d).
    const picks = kCenterGreedy(line, 3);
    expect(picks.map((p) => p.id)).toEqual(['d', 'a', 'e']);
    expect(picks[0]!.distance).toBeCloseTo(6.6);
    expect(picks[1]!.distance).toBe(10);
    expect(picks[2]!.distance).toBe(4);
    // After d: a is 10 away; after d, a: e is 4 away; after d, a, e: c is 2 from e or a.
    expect(picks.map((p) => p.covering_radius)).toEqual([10, 4, 2]);
  });

  it('answers each pick with the covering radius before it, which never grows', () => {
    const grid = Array.from({ length: 49 }, (_, i) =>
      point(`p${String(i).padStart(2, '0')}`, i % 7, (i * 3) % 11),
    );
    const picks = kCenterGreedy(grid, 12);
    for (let i = 1; i < picks.length; i++) {
      expect(picks[i]!.distance).toBeCloseTo(picks[i - 1]!.covering_radius, 12);
      expect(picks[i]!.covering_radius).toBeLessThanOrEqual(picks[i - 1]!.covering_radius);
    }
    const chosen = picks.map((p) => grid.find((g) => g.id === p.id)!);
    expect(picks.at(-1)!.covering_radius).toBeCloseTo(radiusOf(grid, chosen), 12);
  });

  it('is within twice the best covering radius (checked against every 3-subset)', () => {
    const pts = [
      point('a', 0, 0),
      point('b', 1, 5),
      point('c', 9, 1),
      point('d', 4, 4),
      point('e', 7, 7),
      point('f', 2, 8),
      point('g', 6, 2),
      point('h', 8, 9),
      point('i', 3, 1),
    ];
    let best = Infinity;
    for (let x = 0; x < pts.length; x++)
      for (let y = x + 1; y < pts.length; y++)
        for (let z = y + 1; z < pts.length; z++)
          best = Math.min(best, radiusOf(pts, [pts[x]!, pts[y]!, pts[z]!]));
    const picks = kCenterGreedy(pts, 3);
    expect(picks.at(-1)!.covering_radius).toBeLessThanOrEqual(2 * best + 1e-12);
  });

  it('is deterministic whatever the input order, breaking ties by the smallest id', () => {
    const square = [point('d', 1, 1), point('b', -1, 1), point('c', 1, -1), point('a', -1, -1)];
    const picks = kCenterGreedy(square, 4).map((p) => p.id);
    // All four are equally far from the mean: a first; then d, the only one at distance √8.
    expect(picks).toEqual(['a', 'd', 'b', 'c']);
    expect(kCenterGreedy([...square].reverse(), 4).map((p) => p.id)).toEqual(picks);

    // x is farthest from the mean; then the two copies tie at 5 from it, and y goes first.
    const copies = kCenterGreedy([point('z', 5), point('y', 5), point('x', 0)], 3);
    expect(copies.map((p) => p.id)).toEqual(['x', 'y', 'z']);
    expect(copies.map((p) => p.distance)).toEqual([expect.closeTo(10 / 3, 12), 5, 0]);
  });

  it('answers every point when k exceeds them, and nothing for no points or k 0', () => {
    expect(kCenterGreedy(line, 99)).toHaveLength(5);
    expect(kCenterGreedy([], 3)).toEqual([]);
    expect(kCenterGreedy(line, 0)).toEqual([]);
    expect(kCenterGreedy([point('only', 3, 4)], 2)).toEqual([
      { id: 'only', distance: 0, covering_radius: 0 },
    ]);
  });

  it('refuses vectors of different lengths and a matrix whose ids do not ascend', () => {
    expect(() => kCenterGreedy([point('a', 1, 2), point('b', 1)], 2)).toThrow(RangeError);
    const picks = kCenterPicks({ ids: ['b', 'a'], dims: 1, data: Float32Array.from([0, 1]) });
    expect(() => picks.next()).toThrow(/ascend/);
    expect(() => kCenterPicks({ ids: ['a'], dims: 2, data: Float32Array.from([0]) }).next()).toThrow(
      RangeError,
    );
  });
});

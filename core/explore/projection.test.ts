import { evenSample, projectPca, projectUmap, seededUniform } from './projection';

/** Two well-separated clusters of unit-ish vectors in 24 dimensions, `n` each. */
function clusters(n: number): number[][] {
  const rand = seededUniform(7);
  const out: number[][] = [];
  for (const centre of [0, 1])
    for (let i = 0; i < n; i++)
      out.push(Array.from({ length: 24 }, (_, k) => (k % 2 === centre ? 1 : 0) + (rand() - 0.5) * 0.1));
  return out;
}

/** Whether the first n points and the last n lie on two sides of a gap wider than either cluster. */
function separated(points: Array<[number, number]>, n: number): boolean {
  const dist = (a: [number, number], b: [number, number]) => Math.hypot(a[0] - b[0], a[1] - b[1]);
  let within = 0;
  let between = Infinity;
  for (let i = 0; i < points.length; i++)
    for (let j = i + 1; j < points.length; j++) {
      const d = dist(points[i]!, points[j]!);
      if (i < n === j < n) within = Math.max(within, d);
      else between = Math.min(between, d);
    }
  return between > within;
}

describe('seededUniform', () => {
  it('repeats per seed and stays in [0, 1)', () => {
    const a = seededUniform(12345);
    const b = seededUniform(12345);
    const c = seededUniform(12346);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs);
    expect(c()).not.toBe(xs[0]);
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true);
    expect(xs.reduce((s, x) => s + x, 0) / xs.length).toBeCloseTo(0.5, 1);
    expect(() => seededUniform(-1)).toThrow(RangeError);
  });
});

describe('evenSample', () => {
  it('keeps everything under the limit and spreads a sample over the order', () => {
    expect(evenSample(3, 5)).toEqual([0, 1, 2]);
    expect(evenSample(10, 4)).toEqual([0, 2, 5, 7]);
  });
});

describe('projections', () => {
  const data = clusters(20);

  it('PCA separates two clusters, with the variance explained', () => {
    const { points, explained_variance } = projectPca(data);
    expect(points).toHaveLength(40);
    expect(separated(points, 20)).toBe(true);
    expect(explained_variance[0]).toBeGreaterThan(0.5);
    expect(projectPca(data).points).toEqual(points);
  });

  it('UMAP separates two clusters and one seed gives one layout', async () => {
    const progress: number[] = [];
    const points = await projectUmap(data, { seed: 3, n_neighbors: 5, min_dist: 0.1, n_epochs: 100 }, (e) => {
      progress.push(e);
    });
    expect(separated(points, 20)).toBe(true);
    expect(progress.at(-1)).toBe(100);
    const again = await projectUmap(data, { seed: 3, n_neighbors: 5, min_dist: 0.1, n_epochs: 100 });
    expect(again).toEqual(points);
    const other = await projectUmap(data, { seed: 4, n_neighbors: 5, min_dist: 0.1, n_epochs: 100 });
    expect(other).not.toEqual(points);
  });

  it('lowers n_neighbors for a handful of points and refuses fewer than three', async () => {
    await expect(
      projectUmap(data.slice(0, 4), { seed: 1, n_neighbors: 15, min_dist: 0.1 }),
    ).resolves.toHaveLength(4);
    await expect(projectUmap(data.slice(0, 2), { seed: 1, n_neighbors: 15, min_dist: 0.1 })).rejects.toThrow(
      RangeError,
    );
  });
});

import { ambiguityScore, sceneOutliers } from './outliers';

/** Points on a line (1-D embeddings), ids p0, p1 … */
const line = (xs: number[]) => ({
  ids: xs.map((_, i) => `p${i}`),
  dims: 1,
  data: Float32Array.from(xs),
});

describe('sceneOutliers', () => {
  it('finds the frame far from every other, scored by its k-th neighbour distance', () => {
    const got = sceneOutliers(line([0, 0.1, 0.2, 0.3, 0.4, 0.5, 10]), 2, 3.5);
    expect(got.map((o) => o.id)).toEqual(['p6']);
    expect(got[0]!.knn_distance).toBeCloseTo(9.6, 5);
  });

  it('keeps nothing in a corpus without a stray frame', () => {
    expect(sceneOutliers(line([0, 1, 2, 3, 4, 5]), 2, 3.5)).toEqual([]);
  });

  it('uses the k-th neighbour, so a pair of strays is still found with k = 2 but hides with k = 1', () => {
    const xs = [0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 10, 10.05];
    expect(sceneOutliers(line(xs), 2, 3).map((o) => o.id)).toEqual(['p8', 'p7']);
    expect(sceneOutliers(line(xs), 1, 3)).toEqual([]);
  });

  it('has no outliers with too few frames for a k-th neighbour', () => {
    expect(sceneOutliers(line([0, 100]), 2, 1)).toEqual([]);
  });
});

describe('ambiguityScore', () => {
  it('scores entropy times confidence from both floors, and nothing under either', () => {
    const floors = { minEntropy: 0.5, minConf: 0.3 };
    expect(ambiguityScore({ entropy: 1, conf: 0.8 }, floors)).toBeCloseTo(0.8);
    expect(ambiguityScore({ entropy: 0.4, conf: 0.9 }, floors)).toBeNull();
    expect(ambiguityScore({ entropy: 1, conf: 0.2 }, floors)).toBeNull();
    expect(ambiguityScore({ entropy: 1, conf: null }, floors)).toBeNull();
  });
});

import { PCA } from 'ml-pca';
import { unsafeUniformIntDistribution, xoroshiro128plus } from 'pure-rand';
import { UMAP } from 'umap-js';

/**
 * 2-D projections of frame embeddings for the explore view (docs/quality-explore.md): UMAP
 * (umap-js) with a seeded random source, so one seed gives one layout, or PCA (the eigenvectors of
 * the covariance matrix, decomposed by ml-pca). Pure computation: the caller reads the vectors and
 * stores the points.
 */

/** Most frames one projection lays out; a larger scope is sampled evenly down to it. */
export const PROJECTION_MAX_FRAMES = 5000;
/** Fewest embedded frames a projection needs (UMAP needs a neighbour beyond the point itself). */
export const PROJECTION_MIN_FRAMES = 3;
export const PROJECTION_METHODS = ['umap', 'pca'] as const;
export type ProjectionMethod = (typeof PROJECTION_METHODS)[number];

export const UMAP_DEFAULTS = { n_neighbors: 15, min_dist: 0.1 } as const;

/** Bound once: jest's sandbox makes global lookups inside hot loops slow (docs/testing.md). */
const { abs, min } = Math;

/**
 * A uniform random number in [0, 1) from pure-rand's xoroshiro128+ seeded with `seed` (53 random
 * bits: 26 + 27 from two uniform integer draws); the same seed gives the same sequence.
 */
export function seededUniform(seed: number): () => number {
  if (!Number.isInteger(seed) || seed < 0 || seed >= 2 ** 32)
    throw new RangeError(`seed must be an integer in [0, 2^32), got ${seed}`);
  const rng = xoroshiro128plus(seed);
  // A small seed leaves xoroshiro's first outputs poorly mixed; one jump (2^64 steps) mixes the state.
  rng.unsafeJump!();
  return () =>
    (unsafeUniformIntDistribution(0, 2 ** 26 - 1, rng) * 2 ** 27 +
      unsafeUniformIntDistribution(0, 2 ** 27 - 1, rng)) /
    2 ** 53;
}

/**
 * Which of `total` items (in their order) a projection of at most `limit` keeps: all of them, or
 * `limit` spread evenly over the order (index ⌊i·total/limit⌋), so a sample of a corpus ordered by
 * session and frame index covers every part of it.
 */
export function evenSample(total: number, limit: number): number[] {
  if (total <= limit) return Array.from({ length: total }, (_, i) => i);
  return Array.from({ length: limit }, (_, i) => Math.floor((i * total) / limit));
}

export type Point2 = [number, number];

export interface UmapOptions {
  seed: number;
  n_neighbors: number;
  min_dist: number;
  /** Optimisation epochs; umap-js chooses from the number of points when omitted (500 up to 2,500 points). */
  n_epochs?: number;
}

/** Called between optimisation epochs (every 10th and the last), e.g. to heartbeat and yield. */
export type EpochProgress = (epoch: number, epochs: number) => void | Promise<void>;

/**
 * UMAP of the vectors to two dimensions, Euclidean distance, seeded: every random draw (the
 * random-projection trees and nearest-neighbour descent, the initial layout, negative sampling)
 * comes from `seededUniform(seed)`, so the same vectors and seed give identical points.
 * `n_neighbors` is lowered to the number of points − 1 when there are fewer points.
 */
export async function projectUmap(
  vectors: readonly (readonly number[])[],
  opts: UmapOptions,
  onProgress?: EpochProgress,
): Promise<Point2[]> {
  if (vectors.length < PROJECTION_MIN_FRAMES)
    throw new RangeError(`UMAP needs at least ${PROJECTION_MIN_FRAMES} points, got ${vectors.length}`);
  const umap = new UMAP({
    nComponents: 2,
    nNeighbors: min(opts.n_neighbors, vectors.length - 1),
    minDist: opts.min_dist,
    random: seededUniform(opts.seed),
    ...(opts.n_epochs ? { nEpochs: opts.n_epochs } : {}),
  });
  const epochs = umap.initializeFit(vectors as number[][]);
  for (let e = 1; e <= epochs; e++) {
    umap.step();
    if (onProgress && (e % 10 === 0 || e === epochs)) await onProgress(e, epochs);
  }
  return umap.getEmbedding().map((p) => [p[0]!, p[1]!]);
}

export interface PcaProjection {
  points: Point2[];
  /** Share of the total variance on each of the two axes. */
  explained_variance: [number, number];
}

/**
 * PCA to two dimensions: the covariance matrix of the centred vectors (computed here in one pass,
 * upper triangle only), its eigenvectors from ml-pca (ml-matrix's symmetric EVD), and each vector
 * centred and projected on the two leading ones. An eigenvector's sign is arbitrary; each is turned
 * so that its largest loading is positive, so a layout does not flip between runs on similar data.
 */
export function projectPca(vectors: readonly (readonly number[])[]): PcaProjection {
  const n = vectors.length;
  if (n < 2) throw new RangeError(`PCA needs at least 2 points, got ${n}`);
  const d = vectors[0]!.length;
  if (vectors.some((v) => v.length !== d)) throw new RangeError('vectors differ in length');
  const mean = new Float64Array(d);
  for (const v of vectors) for (let k = 0; k < d; k++) mean[k]! += v[k]!;
  for (let k = 0; k < d; k++) mean[k]! /= n;
  const upper = new Float64Array(d * d);
  const c = new Float64Array(d);
  for (const v of vectors) {
    for (let k = 0; k < d; k++) c[k] = v[k]! - mean[k]!;
    for (let a = 0; a < d; a++) {
      const ca = c[a]!;
      if (ca === 0) continue;
      const row = a * d;
      for (let b = a; b < d; b++) upper[row + b]! += ca * c[b]!;
    }
  }
  const covariance: number[][] = [];
  for (let a = 0; a < d; a++) {
    const row = new Array<number>(d);
    for (let b = 0; b < d; b++) row[b] = (a <= b ? upper[a * d + b]! : upper[b * d + a]!) / (n - 1);
    covariance.push(row);
  }
  const pca = new PCA(covariance, { isCovarianceMatrix: true });
  const u = pca.getEigenvectors();
  const axes: Float64Array[] = [0, 1].map((j) => {
    const axis = Float64Array.from({ length: d }, (_, k) => (j < u.columns ? u.get(k, j) : 0));
    let largest = 0;
    for (let k = 1; k < d; k++) if (abs(axis[k]!) > abs(axis[largest]!)) largest = k;
    if (axis[largest]! < 0) for (let k = 0; k < d; k++) axis[k] = -axis[k]!;
    return axis;
  });
  const points = vectors.map((v): Point2 => {
    let x = 0;
    let y = 0;
    for (let k = 0; k < d; k++) {
      const ck = v[k]! - mean[k]!;
      x += ck * axes[0]![k]!;
      y += ck * axes[1]![k]!;
    }
    return [x, y];
  });
  const explained = pca.getExplainedVariance();
  return { points, explained_variance: [explained[0] ?? 0, explained[1] ?? 0] };
}

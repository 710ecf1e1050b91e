/**
 * A diverse subset by k-center greedy (farthest-point traversal; Gonzalez 1985, used for
 * active-learning core sets by Sener and Savarese 2018): each pick is the point farthest from every
 * earlier pick, so after k picks every point lies within the covering radius of one of them, at
 * most twice the optimal k-center radius.
 *
 * Deterministic: points are taken in id order, the first pick is the point farthest from the mean,
 * and every tie (equal distances, duplicate frames) goes to the smallest id.
 */

export interface EmbeddedPoint {
  id: string;
  vector: ArrayLike<number>;
}

export interface KCenterPick {
  id: string;
  /**
   * Euclidean distance to the nearest earlier pick, the covering radius of the picks before it;
   * for the first pick, its distance from the mean.
   */
  distance: number;
  /** Covering radius once this pick is made: the largest distance of any point to its nearest pick so far. */
  covering_radius: number;
}

/** Largest k, frames considered and their product (each pick measures every frame once) per request. */
export const DIVERSE_MAX_K = 1000;
export const DIVERSE_MAX_FRAMES = 20_000;
export const DIVERSE_WORK_BUDGET = 1_000_000;

/** Points as one row-major matrix, ids ascending (the tie order). */
export interface PointMatrix {
  ids: readonly string[];
  dims: number;
  data: Float32Array;
}

/** Euclidean distance between rows a and b. */
export function rowDistance(data: Float32Array, a: number, b: number, dims: number): number {
  let sum = 0;
  const at = a * dims;
  const bt = b * dims;
  for (let d = 0; d < dims; d++) {
    const diff = data[at + d]! - data[bt + d]!;
    sum += diff * diff;
  }
  return Math.sqrt(sum);
}

function distanceToMean(data: Float32Array, row: number, mean: Float64Array): number {
  let sum = 0;
  for (let d = 0, i = row * mean.length; d < mean.length; d++, i++) {
    const diff = data[i]! - mean[d]!;
    sum += diff * diff;
  }
  return Math.sqrt(sum);
}

/** Index of the largest value, the first (smallest id) on a tie; -1 when all are picked. */
function argmax(values: Float64Array, picked: Uint8Array): number {
  let best = -1;
  for (let i = 0; i < values.length; i++)
    if (!picked[i] && (best < 0 || values[i]! > values[best]!)) best = i;
  return best;
}

/**
 * The picks one at a time, in pick order, until every point is picked: a caller stops after k, and
 * may yield to other work between picks (each costs one pass over the points).
 */
export function* kCenterPicks(points: PointMatrix): Generator<KCenterPick> {
  const { ids, dims, data } = points;
  const n = ids.length;
  if (data.length !== n * dims)
    throw new RangeError(`${n} points of ${dims} dimensions need ${n * dims} values`);
  for (let i = 1; i < n; i++) if (!(ids[i - 1]! < ids[i]!)) throw new RangeError('point ids must ascend');
  const mean = new Float64Array(dims);
  for (let i = 0; i < n; i++) for (let d = 0; d < dims; d++) mean[d]! += data[i * dims + d]! / n;

  const nearest = new Float64Array(n);
  for (let i = 0; i < n; i++) nearest[i] = distanceToMean(data, i, mean);
  const picked = new Uint8Array(n);
  for (let next = argmax(nearest, picked), first = true; next >= 0; next = argmax(nearest, picked)) {
    const pickDistance = nearest[next]!;
    picked[next] = 1;
    let radius = 0;
    for (let i = 0; i < n; i++) {
      if (picked[i]) continue;
      const toPick = rowDistance(data, i, next, dims);
      nearest[i] = first ? toPick : Math.min(nearest[i]!, toPick);
      radius = Math.max(radius, nearest[i]!);
    }
    first = false;
    yield { id: ids[next]!, distance: pickDistance, covering_radius: radius };
  }
}

/** Up to k picks of points given in any order; every vector must have the same length. */
export function kCenterGreedy(points: readonly EmbeddedPoint[], k: number): KCenterPick[] {
  const ordered = [...points].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const dims = ordered[0]?.vector.length ?? 0;
  const data = new Float32Array(ordered.length * dims);
  ordered.forEach((p, i) => {
    if (p.vector.length !== dims)
      throw new RangeError(`point ${p.id} has ${p.vector.length} dimensions, not ${dims}`);
    data.set(Array.from(p.vector), i * dims);
  });
  const picks: KCenterPick[] = [];
  if (k <= 0) return picks;
  for (const pick of kCenterPicks({ ids: ordered.map((p) => p.id), dims, data })) {
    picks.push(pick);
    if (picks.length >= k) break;
  }
  return picks;
}

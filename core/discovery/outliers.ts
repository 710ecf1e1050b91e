import { rowDistance, type PointMatrix } from '../curation/kcenter';

/** The consistency constant that makes the median absolute deviation estimate σ for normal data. */
const MAD_TO_SIGMA = 1.4826;
/** The same for the mean absolute deviation (√(π/2)). */
const MEAN_AD_TO_SIGMA = 1.2533;

export interface SceneOutlier {
  id: string;
  /** Euclidean distance to the k-th nearest other frame. */
  knn_distance: number;
  /** How far that is above the corpus's typical one, in robust standard deviations. */
  robust_z: number;
}

/**
 * Frames unlike the rest (docs/discovery.md): each frame's distance to its k-th nearest other frame
 * (a scene the corpus has many of has near neighbours; a new one has none), scored as a robust z —
 * (d − median) / (1.4826 · MAD) over all frames, so a few outliers do not hide themselves by
 * inflating the spread — and kept from `minZ`. Best first, ties by id. Fewer than k + 1 frames have
 * no k-th neighbour: nothing is an outlier.
 */
export function sceneOutliers(points: PointMatrix, k: number, minZ: number): SceneOutlier[] {
  const n = points.ids.length;
  if (n <= k) return [];
  // Each frame keeps its k nearest distances, sorted ascending; every pair is measured once.
  const nearest = Array.from({ length: n }, () => [] as number[]);
  const keep = (row: number[], d: number) => {
    if (row.length === k && d >= row[k - 1]!) return;
    let at = row.length < k ? row.length : k - 1;
    row[at] = d;
    while (at > 0 && row[at - 1]! > row[at]!) {
      [row[at - 1], row[at]] = [row[at]!, row[at - 1]!];
      at--;
    }
  };
  for (let a = 0; a < n; a++)
    for (let b = a + 1; b < n; b++) {
      const d = rowDistance(points.data, a, b, points.dims);
      keep(nearest[a]!, d);
      keep(nearest[b]!, d);
    }
  const kth = nearest.map((row) => row[k - 1]!);
  const median = medianOf(kth);
  const deviations = kth.map((d) => Math.abs(d - median));
  // Most frames at one spacing make the MAD 0 (or float noise: under a millionth of the median);
  // then the mean absolute deviation (scaled to σ for normal data) measures the spread, and a corpus
  // with no spread at all has no outlier.
  const mad = medianOf(deviations);
  const scale =
    mad > 1e-6 * median
      ? MAD_TO_SIGMA * mad
      : MEAN_AD_TO_SIGMA * (deviations.reduce((sum, d) => sum + d, 0) / deviations.length);
  if (!(scale > 0)) return [];
  return kth
    .map((d, i) => ({ id: points.ids[i]!, knn_distance: d, robust_z: (d - median) / scale }))
    .filter((o) => o.robust_z >= minZ)
    .sort((x, y) => y.robust_z - x.robust_z || (x.id < y.id ? -1 : 1));
}

function medianOf(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** A machine-made object the detectors disagree on: class entropy across the fusion paths, and confidence. */
export interface ClassDispute {
  entropy: number;
  conf: number | null;
}

/**
 * The ambiguous-class score: the paths' class entropy (bits) times the object's confidence — an
 * object surely there whose class the detectors cannot agree on is what the ontology may be
 * missing. Null below either floor.
 */
export function ambiguityScore(
  o: ClassDispute,
  floors: { minEntropy: number; minConf: number },
): number | null {
  const conf = o.conf ?? 0;
  if (o.entropy < floors.minEntropy || conf < floors.minConf) return null;
  return o.entropy * conf;
}

import { minCostAssignment } from '../../tracking/assignment';
import type { MotSequence } from './sequence';

/** HOTA's localisation thresholds α: 0.05, 0.10, …, 0.95, computed as TrackEval's np.arange(0.05, 0.99, 0.05). */
export const HOTA_ALPHAS: readonly number[] = Array.from({ length: 19 }, (_, i) => 0.05 + i * 0.05);

/** TrackEval's tolerance on similarity comparisons (np.finfo(float).eps). */
const EPS = Number.EPSILON;

/** HOTA and its parts: detection (DetA), association (AssA), localisation (LocA), their recalls and precisions. */
export interface HotaParts {
  hota: number;
  det_a: number;
  ass_a: number;
  loc_a: number;
  det_re: number;
  det_pr: number;
  ass_re: number;
  ass_pr: number;
}

/** The parts at one localisation threshold α, with the matches they count. */
export interface HotaAtAlpha extends HotaParts {
  alpha: number;
  tp: number;
  fn: number;
  fp: number;
}

/** HOTA (Luiten et al. 2021) and its parts, each the mean over the α thresholds. */
export interface HotaScores extends HotaParts {
  per_alpha: HotaAtAlpha[];
}

const mean = (xs: readonly number[]): number => xs.reduce((a, b) => a + b, 0) / xs.length;

function emptyScores(fn: number, fp: number): HotaScores {
  const perAlpha = HOTA_ALPHAS.map((alpha): HotaAtAlpha => ({
    alpha,
    hota: 0,
    det_a: 0,
    ass_a: 0,
    loc_a: 1,
    det_re: 0,
    det_pr: 0,
    ass_re: 0,
    ass_pr: 0,
    tp: 0,
    fn,
    fp,
  }));
  return { ...summarise(perAlpha), per_alpha: perAlpha };
}

function summarise(perAlpha: readonly HotaAtAlpha[]): HotaParts {
  const avg = (k: keyof Omit<HotaAtAlpha, 'alpha'>) => mean(perAlpha.map((a) => a[k]));
  return {
    hota: avg('hota'),
    det_a: avg('det_a'),
    ass_a: avg('ass_a'),
    loc_a: avg('loc_a'),
    det_re: avg('det_re'),
    det_pr: avg('det_pr'),
    ass_re: avg('ass_re'),
    ass_pr: avg('ass_pr'),
  };
}

/**
 * TrackEval's HOTA.eval_sequence: a global alignment score per (ground truth, hypothesis) track
 * pair from soft per-frame overlaps, per-frame matches maximising alignment × IoU, then per α the
 * matches with IoU ≥ α give detection (DetA), association (AssA) and localisation (LocA) scores.
 */
export function hotaScores(seq: MotSequence): HotaScores {
  if (seq.hypBoxes === 0) return emptyScores(seq.gtBoxes, 0);
  if (seq.gtBoxes === 0) return emptyScores(0, seq.hypBoxes);
  const G = seq.gtIds.length;
  const H = seq.hypIds.length;
  const potential = Array.from({ length: G }, () => new Float64Array(H));
  const gtCount = new Float64Array(G);
  const hypCount = new Float64Array(H);
  for (const f of seq.frames) {
    const colSum = f.hyp.map((_, j) => f.iou.reduce((s, row) => s + row[j]!, 0));
    const rowSum = f.iou.map((row) => row.reduce((s, v) => s + v, 0));
    f.gt.forEach((g, i) =>
      f.hyp.forEach((h, j) => {
        const denom = colSum[j]! + rowSum[i]! - f.iou[i]![j]!;
        if (denom > EPS) potential[g]![h]! += f.iou[i]![j]! / denom;
      }),
    );
    for (const g of f.gt) gtCount[g]!++;
    for (const h of f.hyp) hypCount[h]!++;
  }
  const alignment = potential.map((row, g) =>
    Array.from(row, (p, h) => p / (gtCount[g]! + hypCount[h]! - p)),
  );
  const A = HOTA_ALPHAS.length;
  const matchCounts = HOTA_ALPHAS.map(() => Array.from({ length: G }, () => new Float64Array(H)));
  const tp = new Float64Array(A);
  const fn = new Float64Array(A);
  const fp = new Float64Array(A);
  const loc = new Float64Array(A);
  for (const f of seq.frames) {
    if (f.gt.length === 0 || f.hyp.length === 0) {
      for (let a = 0; a < A; a++) {
        fp[a]! += f.hyp.length;
        fn[a]! += f.gt.length;
      }
      continue;
    }
    const pairs = minCostAssignment(
      f.gt.map((g, i) => f.hyp.map((h, j) => -alignment[g]![h]! * f.iou[i]![j]!)),
    );
    HOTA_ALPHAS.forEach((alpha, a) => {
      const kept = pairs.filter(([i, j]) => f.iou[i]![j]! >= alpha - EPS);
      tp[a]! += kept.length;
      fn[a]! += f.gt.length - kept.length;
      fp[a]! += f.hyp.length - kept.length;
      for (const [i, j] of kept) {
        loc[a]! += f.iou[i]![j]!;
        matchCounts[a]![f.gt[i]!]![f.hyp[j]!]!++;
      }
    });
  }
  const perAlpha = HOTA_ALPHAS.map((alpha, a): HotaAtAlpha => {
    let assA = 0;
    let assRe = 0;
    let assPr = 0;
    matchCounts[a]!.forEach((row, g) =>
      row.forEach((m, h) => {
        if (m === 0) return;
        assA += (m * m) / Math.max(1, gtCount[g]! + hypCount[h]! - m);
        assRe += (m * m) / Math.max(1, gtCount[g]!);
        assPr += (m * m) / Math.max(1, hypCount[h]!);
      }),
    );
    const n = Math.max(1, tp[a]!);
    const detA = tp[a]! / Math.max(1, tp[a]! + fn[a]! + fp[a]!);
    return {
      alpha,
      hota: Math.sqrt(detA * (assA / n)),
      det_a: detA,
      ass_a: assA / n,
      loc_a: Math.max(1e-10, loc[a]!) / Math.max(1e-10, tp[a]!),
      det_re: tp[a]! / Math.max(1, tp[a]! + fn[a]!),
      det_pr: tp[a]! / Math.max(1, tp[a]! + fp[a]!),
      ass_re: assRe / n,
      ass_pr: assPr / n,
      tp: tp[a]!,
      fn: fn[a]!,
      fp: fp[a]!,
    };
  });
  return { ...summarise(perAlpha), per_alpha: perAlpha };
}

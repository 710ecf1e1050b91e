import {
  bootstrapStatistic,
  pairedSignificance,
  type BootstrapStatisticInterval,
  type PairedSignificance,
} from '../quality/stats';
import { drawCounts, frameF1, weightedMap, type Matching } from './match';

/**
 * Is run A better than run B on the same gold frames? Two views, both paired over frames:
 *
 * 1. **Per-frame score, paired tests.** Each frame's score is its F1 at the operating point
 *    (predictions with conf ≥ conf_thr matched at iou_thr; 1 for a frame with nothing to find and
 *    nothing claimed). F1 is bounded, so no crowded frame outweighs the rest, and it charges misses
 *    and false alarms alike; TP − FP would be unbounded, scale with crowd size and ignore misses.
 *    The scores go through core's pairedSignificance: mean difference with its bootstrap interval,
 *    sign-flip permutation test, Wilcoxon signed-rank.
 * 2. **Paired bootstrap of the mAP difference.** mAP at iou_thr (every prediction, 101-point AP,
 *    mean over classes with gold) of A minus B, over frame resamples drawn once and applied to both
 *    runs (core's bootstrapStatistic; matching never crosses frames, so a resample re-weights fixed
 *    outcomes). The same seed draws the same resamples as view 1's bootstrap.
 *
 * A run is called better by the mAP view when the difference's interval excludes 0, and by the
 * per-frame view when the permutation p-value is under alpha.
 */

export interface SignificanceOptions {
  confThr: number;
  alpha: number;
  nBoot: number;
  seed: number;
  nPerm: number;
}

export interface RunComparison {
  frames: number;
  per_frame_score: string;
  mean_f1_a: number;
  mean_f1_b: number;
  paired: PairedSignificance;
  map_a: number | null;
  map_b: number | null;
  /** mAP(A) − mAP(B) with its paired percentile bootstrap interval. */
  map_difference: BootstrapStatisticInterval;
  verdict: {
    /** `a`, `b`, or null when the mAP difference's interval holds 0. */
    better_by_map: 'a' | 'b' | null;
    /** `a`, `b`, or null when the permutation p-value is not under alpha. */
    better_by_frame_f1: 'a' | 'b' | null;
  };
}

export function compareRuns(a: Matching, b: Matching, opts: SignificanceOptions): RunComparison {
  const n = a.frameIds.length;
  const f1a = frameF1(a, opts.confThr);
  const f1b = frameF1(b, opts.confThr);
  const paired = pairedSignificance(f1a, f1b, {
    alpha: opts.alpha,
    nBoot: opts.nBoot,
    seed: opts.seed,
    nPerm: opts.nPerm,
  });
  const weights = new Float64Array(n);
  const map_difference = bootstrapStatistic(
    n,
    (indices) => {
      drawCounts(n, indices, weights);
      const ma = weightedMap(a, weights);
      const mb = weightedMap(b, weights);
      return ma === null || mb === null ? NaN : ma - mb;
    },
    { alpha: opts.alpha, nBoot: opts.nBoot, seed: opts.seed },
  );
  const ones = new Float64Array(n).fill(1);
  const mean = (v: number[]) => v.reduce((s, x) => s + x, 0) / v.length;
  const { lo, hi } = map_difference;
  const meanDiff = paired.mean_difference.mean;
  return {
    frames: n,
    per_frame_score: `F1 at IoU ≥ ${a.iouThr}, predictions with conf ≥ ${opts.confThr}`,
    mean_f1_a: mean(f1a),
    mean_f1_b: mean(f1b),
    paired,
    map_a: weightedMap(a, ones),
    map_b: weightedMap(b, ones),
    map_difference,
    verdict: {
      better_by_map: lo !== null && lo > 0 ? 'a' : hi !== null && hi < 0 ? 'b' : null,
      better_by_frame_f1:
        paired.permutation.p_value < opts.alpha && meanDiff !== 0 ? (meanDiff > 0 ? 'a' : 'b') : null,
    },
  };
}

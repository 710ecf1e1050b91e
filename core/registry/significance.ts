import {
  drawCounts,
  matchRun,
  weightedMap,
  type EvalGoldBox,
  type EvalPrediction,
  type Matching,
} from '../evalgov';
import { bootstrapStatistic } from '../quality/stats';

/**
 * Does the challenger beat the champion's mAP on the same gold frames? A paired, seeded bootstrap
 * over frames of mAP(challenger) − mAP(champion), one-sided.
 *
 * mAP is COCO's headline: AP averaged over the IoU thresholds .50:.05:.95 and over the classes with
 * gold boxes, each AP the 101-point interpolation over every prediction (no maxDets cap or area
 * ranges: those belong to the COCO report, not to a comparison of two runs). Matching never crosses
 * frames, so a resample only re-weights each prediction's fixed outcome at each threshold: both
 * runs are matched once per threshold and every replicate is a weighted pass. The same resamples
 * (one seed) are applied to both runs: that pairing is what makes a small gold set informative.
 *
 * The challenger is better when the lower bound of the one-sided (1 − alpha) interval is above 0:
 * the alpha-quantile of the resampled differences. Two identical runs differ by exactly 0 in every
 * resample, so they are never called better.
 */

export const COCO_IOU_THRESHOLDS: readonly number[] = Array.from({ length: 10 }, (_, i) => 0.5 + i * 0.05);

export interface MapDifferenceTest {
  statistic: string;
  frames: number;
  challenger_map: number | null;
  champion_map: number | null;
  /** mAP(challenger) − mAP(champion) on the frames as given. */
  difference: number | null;
  /** The alpha-quantile of the resampled differences: the one-sided (1 − alpha) lower bound. */
  lower_bound: number | null;
  alpha: number;
  n_boot: number;
  seed: number;
  /** Resamples where a run had no class with gold (left out). */
  n_undefined: number;
  /** lower_bound > 0. */
  better: boolean;
}

/** One matching per IoU threshold of a run on the frames. */
export function matchAtThresholds(
  gold: readonly EvalGoldBox[],
  predictions: readonly EvalPrediction[],
  frameIds: readonly string[],
  thresholds: readonly number[] = COCO_IOU_THRESHOLDS,
): Matching[] {
  return thresholds.map((t) => matchRun(gold, predictions, frameIds, t));
}

/** Mean over thresholds of the weighted mAP; NaN when a threshold has no class with gold under the weights. */
function meanMap(matchings: readonly Matching[], weights: ArrayLike<number>): number {
  let sum = 0;
  for (const m of matchings) {
    const v = weightedMap(m, weights);
    if (v === null) return NaN;
    sum += v;
  }
  return sum / matchings.length;
}

export function mapDifferenceTest(
  challenger: readonly Matching[],
  champion: readonly Matching[],
  opts: { alpha: number; nBoot: number; seed: number },
): MapDifferenceTest {
  const n = challenger[0]?.frameIds.length ?? 0;
  if (challenger.length !== champion.length || champion.some((m) => m.frameIds.length !== n))
    throw new Error('both runs must be matched on the same frames at the same thresholds');
  const thresholds = challenger.map((m) => m.iouThr);
  const statistic = `mAP@[${thresholds[0]?.toFixed(2)}:${thresholds[thresholds.length - 1]?.toFixed(2)}] (challenger − champion), paired bootstrap over frames, one-sided`;
  const ones = new Float64Array(n).fill(1);
  const finite = (v: number) => (Number.isFinite(v) ? v : null);
  const challengerMap = n ? finite(meanMap(challenger, ones)) : null;
  const championMap = n ? finite(meanMap(champion, ones)) : null;
  const base = {
    statistic,
    frames: n,
    challenger_map: challengerMap,
    champion_map: championMap,
    alpha: opts.alpha,
    n_boot: opts.nBoot,
    seed: opts.seed,
  };
  if (!n || challengerMap === null || championMap === null)
    return { ...base, difference: null, lower_bound: null, n_undefined: opts.nBoot, better: false };
  const weights = new Float64Array(n);
  // A two-sided interval at 2·alpha has the alpha-quantile as its lower end.
  const interval = bootstrapStatistic(
    n,
    (indices) => {
      drawCounts(n, indices, weights);
      return meanMap(challenger, weights) - meanMap(champion, weights);
    },
    { alpha: 2 * opts.alpha, nBoot: opts.nBoot, seed: opts.seed },
  );
  return {
    ...base,
    difference: interval.estimate,
    lower_bound: interval.lo,
    n_undefined: interval.n_undefined,
    better: interval.lo !== null && interval.lo > 0,
  };
}

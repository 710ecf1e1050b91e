import { MIN_CONTROL_SAMPLE } from '../control';
import type { EvalPrediction, Matching } from '../evalgov';
import type { Box } from '../geometry';
import { matchFrameClass } from '../quality/match-rule';
import { bootstrapStatistic } from '../quality/stats';

/**
 * What a model misses on gold, and how far its recall can be trusted (docs/experiments.md).
 */

export interface GoldObject {
  object_id: string;
  frame_id: string;
  class_id: number;
  bbox: Box;
}

/**
 * The gold objects no prediction of the run matches: COCO's greedy rule at `iouThr` within a frame
 * and class (core/quality/match-rule), over the predictions with conf ≥ confThr. In the gold
 * objects' order.
 */
export function missedGold(
  gold: readonly GoldObject[],
  predictions: readonly EvalPrediction[],
  opts: { iouThr: number; confThr: number },
): GoldObject[] {
  const key = (frame: string, cls: number) => `${frame}\u0000${cls}`;
  const predBy = new Map<string, EvalPrediction[]>();
  for (const p of predictions) {
    if (p.conf < opts.confThr) continue;
    const k = key(p.frame_id, p.class_id);
    const list = predBy.get(k);
    if (list) list.push(p);
    else predBy.set(k, [p]);
  }
  const goldBy = new Map<string, GoldObject[]>();
  for (const g of gold) {
    const k = key(g.frame_id, g.class_id);
    const list = goldBy.get(k);
    if (list) list.push(g);
    else goldBy.set(k, [g]);
  }
  const matched = new Set<string>();
  for (const [k, golds] of goldBy) {
    const preds = (predBy.get(k) ?? []).slice().sort((a, b) => b.conf - a.conf);
    const taken = new Uint8Array(golds.length);
    matchFrameClass(
      preds,
      golds.map((g) => g.bbox),
      opts.iouThr,
      taken,
    );
    golds.forEach((g, i) => {
      if (taken[i]) matched.add(g.object_id);
    });
  }
  return gold.filter((g) => !matched.has(g.object_id));
}

export interface RecallReliability {
  class_id: number;
  gold: number;
  tp: number;
  recall: number;
  /** Percentile bootstrap interval over frames (the recall recomputed as a ratio per resample). */
  lo: number | null;
  hi: number | null;
  width: number | null;
  /** At least `min_sample` gold objects (spec Limits: 25). */
  enough_sample: boolean;
  /** Enough sample and an interval no wider than `max_width`. */
  reliable: boolean;
  reason: string | null;
}

export interface ReliabilityOptions {
  confThr: number;
  alpha: number;
  nBoot: number;
  seed: number;
  minSample: number;
  maxWidth: number;
}

export const RELIABILITY_DEFAULTS = { minSample: MIN_CONTROL_SAMPLE, maxWidth: 0.2 } as const;

/**
 * Recall per class with gold boxes at the operating point, with a bootstrap interval over frames:
 * each resample re-weights the frames and recomputes TP / gold (a ratio, not a mean of per-frame
 * recalls). The same seed draws the same resamples for every class.
 */
export function recallReliability(m: Matching, opts: ReliabilityOptions): RecallReliability[] {
  const n = m.frameIds.length;
  return m.classes
    .filter((c) => c.gold > 0)
    .map((c) => {
      const tpPerFrame = new Float64Array(n);
      for (let i = 0; i < c.conf.length && c.conf[i]! >= opts.confThr; i++)
        tpPerFrame[c.frame[i]!]! += c.tp[i]!;
      const tp = tpPerFrame.reduce((s, v) => s + v, 0);
      const interval = bootstrapStatistic(
        n,
        (indices) => {
          let hit = 0;
          let total = 0;
          for (let i = 0; i < indices.length; i++) {
            hit += tpPerFrame[indices[i]!]!;
            total += c.goldPerFrame[indices[i]!]!;
          }
          return total > 0 ? hit / total : NaN;
        },
        { alpha: opts.alpha, nBoot: opts.nBoot, seed: opts.seed },
      );
      const width = interval.lo === null || interval.hi === null ? null : interval.hi - interval.lo;
      const enough = c.gold >= opts.minSample;
      const narrow = width !== null && width <= opts.maxWidth;
      return {
        class_id: c.classId,
        gold: c.gold,
        tp,
        recall: tp / c.gold,
        lo: interval.lo,
        hi: interval.hi,
        width,
        enough_sample: enough,
        reliable: enough && narrow,
        reason: !enough
          ? `${c.gold} gold objects, fewer than ${opts.minSample}: too few to trust`
          : !narrow
            ? `the ${Math.round((1 - opts.alpha) * 100)}% interval is ${width === null ? 'undefined' : width.toFixed(3)} wide, more than ${opts.maxWidth}`
            : null,
      };
    });
}

import type { Box } from '../geometry';
import { RefusedError } from '../errors';
import { MIN_CONTROL_SAMPLE } from '../control';
import { bootstrapFrames, percentileInterval } from './resample';
import { interpolatedAp, matchFrameClass } from './match-rule';

/**
 * Measuring predictions against a gold set (issue: gold measure): per class, precision, recall and
 * AP at one IoU threshold, each with a bootstrap confidence interval over frames.
 *
 * Matching is COCO's rule at a single threshold: within a frame and a class, predictions in
 * descending confidence each take the unmatched gold box they overlap most, if that IoU reaches
 * `iou_thr`. Because matching never crosses frames, resampling frames with replacement only
 * re-weights each prediction's fixed true/false-positive outcome — so every bootstrap replicate is a
 * weighted pass over the predictions sorted once, not a re-match.
 */

export interface GoldBox {
  frame_id: string;
  class_id: number;
  bbox: Box;
}

export interface PredictedBox {
  frame_id: string;
  class_id: number;
  conf: number | null;
  bbox: Box;
}

export interface MeasureOptions {
  iou_thr: number;
  alpha: number;
  n_boot: number;
  seed: number;
}

export const MEASURE_DEFAULTS: MeasureOptions = { iou_thr: 0.5, alpha: 0.05, n_boot: 2000, seed: 12345 };

export interface Interval {
  lo: number | null;
  hi: number | null;
}

export interface ClassMeasure {
  class_id: number;
  gold: number;
  predicted: number;
  true_positives: number;
  false_positives: number;
  false_negatives: number;
  precision: number | null;
  recall: number | null;
  ap: number | null;
  precision_ci: Interval;
  recall_ci: Interval;
  ap_ci: Interval;
  /** Fewer than 25 gold objects (spec Limits): the figures are shown but too thin to trust. */
  below_min_sample: boolean;
}

export interface GoldMeasure {
  frames: number;
  gold: number;
  predicted: number;
  iou_thr: number;
  alpha: number;
  n_boot: number;
  seed: number;
  /** Over all classes pooled. */
  precision: number | null;
  recall: number | null;
  precision_ci: Interval;
  recall_ci: Interval;
  /** Mean AP over the classes that have gold objects. */
  map: number | null;
  map_ci: Interval;
  classes: ClassMeasure[];
  /** Predictions of classes absent from the gold set: all false positives, listed per class. */
  classes_without_gold: number[];
}

interface ClassOutcomes {
  classId: number;
  /** Prediction outcomes sorted by descending confidence. */
  tp: Uint8Array;
  frameOf: Uint32Array;
  /** Gold objects per frame index. */
  goldPerFrame: Map<number, number>;
  gold: number;
}

/** Ratio, or null when there is nothing to divide by. */
const ratio = (num: number, den: number): number | null => (den > 0 ? num / den : null);

export function measureAgainstGold(
  gold: readonly GoldBox[],
  predictions: readonly PredictedBox[],
  frameIds: readonly string[],
  opts: MeasureOptions = MEASURE_DEFAULTS,
): GoldMeasure {
  if (predictions.some((p) => p.conf === null))
    throw new RefusedError(
      'the run has predictions without a confidence (a reconstructed run): AP evaluation is refused',
      { reason: 'reconstructed' },
    );
  const frameIndex = new Map(frameIds.map((id, i) => [id, i]));
  const goldBy = new Map<string, GoldBox[]>();
  const key = (frame: string, cls: number) => `${frame}\u0000${cls}`;
  for (const g of gold) {
    const k = key(g.frame_id, g.class_id);
    const list = goldBy.get(k);
    if (list) list.push(g);
    else goldBy.set(k, [g]);
  }
  const predBy = new Map<string, PredictedBox[]>();
  for (const p of predictions) {
    if (!frameIndex.has(p.frame_id)) continue;
    const k = key(p.frame_id, p.class_id);
    const list = predBy.get(k);
    if (list) list.push(p);
    else predBy.set(k, [p]);
  }

  // Per class: each prediction's outcome (true or false positive), with its confidence and frame.
  const perClass = new Map<
    number,
    { conf: number[]; tp: number[]; frame: number[]; goldPerFrame: Map<number, number> }
  >();
  const classEntry = (c: number) => {
    let e = perClass.get(c);
    if (!e) perClass.set(c, (e = { conf: [], tp: [], frame: [], goldPerFrame: new Map() }));
    return e;
  };
  for (const g of gold) {
    const e = classEntry(g.class_id);
    const f = frameIndex.get(g.frame_id)!;
    e.goldPerFrame.set(f, (e.goldPerFrame.get(f) ?? 0) + 1);
  }
  for (const [k, preds] of predBy) {
    const golds = (goldBy.get(k) ?? []).map((g) => g.bbox);
    const sorted = [...preds].sort((a, b) => b.conf! - a.conf!);
    const e = classEntry(sorted[0]!.class_id);
    const f = frameIndex.get(sorted[0]!.frame_id)!;
    const outcomes = matchFrameClass(sorted, golds, opts.iou_thr);
    sorted.forEach((p, i) => {
      e.conf.push(p.conf!);
      e.tp.push(outcomes[i]!);
      e.frame.push(f);
    });
  }
  const classes: ClassOutcomes[] = [...perClass.entries()]
    .sort(([a], [b]) => a - b)
    .map(([classId, e]) => {
      const order = e.conf.map((_, i) => i).sort((a, b) => e.conf[b]! - e.conf[a]! || a - b);
      return {
        classId,
        tp: Uint8Array.from(order.map((i) => e.tp[i]!)),
        frameOf: Uint32Array.from(order.map((i) => e.frame[i]!)),
        goldPerFrame: e.goldPerFrame,
        gold: [...e.goldPerFrame.values()].reduce((s, n) => s + n, 0),
      };
    });

  /** Every figure of one weighting of the frames (all ones: the measurement itself). */
  const figures = (w: (frame: number) => number) => {
    let tpAll = 0;
    let predAll = 0;
    let goldAll = 0;
    const perClassFigures = classes.map((c) => {
      let tp = 0;
      let pred = 0;
      for (let i = 0; i < c.tp.length; i++) {
        const wi = w(c.frameOf[i]!);
        pred += wi;
        if (c.tp[i]) tp += wi;
      }
      let positives = 0;
      for (const [f, n] of c.goldPerFrame) positives += w(f) * n;
      tpAll += tp;
      predAll += pred;
      goldAll += positives;
      return {
        precision: ratio(tp, pred),
        recall: ratio(tp, positives),
        ap: c.gold > 0 && positives > 0 ? interpolatedAp(c.tp, (i) => w(c.frameOf[i]!), positives) : null,
      };
    });
    const aps = perClassFigures.filter((_, i) => classes[i]!.gold > 0).map((f) => f.ap);
    const defined = aps.filter((a): a is number => a !== null);
    return {
      precision: ratio(tpAll, predAll),
      recall: ratio(tpAll, goldAll),
      map: defined.length ? defined.reduce((s, a) => s + a, 0) / defined.length : null,
      classes: perClassFigures,
    };
  };

  const point = figures(() => 1);
  const replicates = bootstrapFrames(frameIds.length, opts.n_boot, opts.seed).map((counts) =>
    figures((f) => counts[f]!),
  );
  const ci = (pick: (r: ReturnType<typeof figures>) => number | null): Interval =>
    percentileInterval(
      replicates.map(pick).filter((v): v is number => v !== null),
      opts.alpha,
    );

  return {
    frames: frameIds.length,
    gold: gold.length,
    predicted: classes.reduce((s, c) => s + c.tp.length, 0),
    iou_thr: opts.iou_thr,
    alpha: opts.alpha,
    n_boot: opts.n_boot,
    seed: opts.seed,
    precision: point.precision,
    recall: point.recall,
    precision_ci: ci((r) => r.precision),
    recall_ci: ci((r) => r.recall),
    map: point.map,
    map_ci: ci((r) => r.map),
    classes: classes.map((c, i) => {
      const tp = c.tp.reduce((s, v) => s + v, 0);
      return {
        class_id: c.classId,
        gold: c.gold,
        predicted: c.tp.length,
        true_positives: tp,
        false_positives: c.tp.length - tp,
        false_negatives: c.gold - tp,
        precision: point.classes[i]!.precision,
        recall: point.classes[i]!.recall,
        ap: point.classes[i]!.ap,
        precision_ci: ci((r) => r.classes[i]!.precision),
        recall_ci: ci((r) => r.classes[i]!.recall),
        ap_ci: ci((r) => r.classes[i]!.ap),
        below_min_sample: c.gold < MIN_CONTROL_SAMPLE,
      };
    }),
    classes_without_gold: classes.filter((c) => c.gold === 0).map((c) => c.classId),
  };
}

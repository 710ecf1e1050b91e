import { MIN_CONTROL_SAMPLE } from '../control';
import { COCO_STAT_NAMES, HEADLINE_METRICS } from '../metrics/coco';
import { cocoInputOf, evaluateHarnesses, type EvalFrame, type HarnessReport } from './coco';
import { classCounts, matchRun, rates, type EvalGoldBox, type EvalPrediction } from './match';

/**
 * One evaluation of a run against gold over a scope (the whole gold set or one slice of it): the
 * COCO figures from both harnesses with their divergence, and per class the counts at `iou_thr`
 * (every prediction counts) that the hierarchical roll-up and the safety floors read.
 */

export interface ClassEvaluation {
  class_id: number;
  gold: number;
  predicted: number;
  /** At iou_thr, every prediction counted. */
  tp: number;
  fp: number;
  fn: number;
  precision: number | null;
  recall: number | null;
  /** COCO (primary harness): AP over IoU .50:.95, AP at .50, AR with 100 detections; null without gold. */
  ap: number | null;
  ap50: number | null;
  ar100: number | null;
  /** Fewer than 25 gold objects (spec Limits): shown, too thin to trust. */
  below_min_sample: boolean;
}

export interface ScopeEvaluation {
  frames: number;
  gold: number;
  predicted: number;
  iou_thr: number;
  /** Headline: COCO AP@[.50:.95] (mAP), AP50, AP75, AR100 of the primary harness. */
  map: number | null;
  ap50: number | null;
  ap75: number | null;
  ar100: number | null;
  /** Pooled over classes at iou_thr, every prediction counted. */
  precision: number | null;
  recall: number | null;
  tp: number;
  fp: number;
  fn: number;
  coco: HarnessReport['coco'];
  streaming: HarnessReport['streaming'];
  parity: HarnessReport['parity'];
  classes: ClassEvaluation[];
  /** Classes predicted on the scope's frames that have no gold box there (COCO leaves them out of mAP). */
  classes_without_gold: number[];
}

export function evaluateScope(
  frames: readonly EvalFrame[],
  gold: readonly EvalGoldBox[],
  predictions: readonly EvalPrediction[],
  opts: { iouThr: number; epsilon: number },
): ScopeEvaluation {
  const frameIds = frames.map((f) => f.id);
  const matching = matchRun(gold, predictions, frameIds, opts.iouThr);
  const counts = classCounts(matching);
  const harness: HarnessReport = frames.length
    ? evaluateHarnesses(cocoInputOf(frames, gold, predictions), opts.epsilon)
    : emptyHarness(opts.epsilon);
  const cocoOf = new Map(harness.per_class.map((c) => [c.class_id, c]));
  const classes = counts.map((c) => {
    const coco = cocoOf.get(c.class_id);
    return {
      ...c,
      ...rates(c),
      ap: coco?.ap ?? null,
      ap50: coco?.ap50 ?? null,
      ar100: coco?.ar100 ?? null,
      below_min_sample: c.gold < MIN_CONTROL_SAMPLE,
    };
  });
  const total = counts.reduce(
    (s, c) => ({
      gold: s.gold + c.gold,
      predicted: s.predicted + c.predicted,
      tp: s.tp + c.tp,
      fp: s.fp + c.fp,
      fn: s.fn + c.fn,
    }),
    { gold: 0, predicted: 0, tp: 0, fp: 0, fn: 0 },
  );
  return {
    frames: frames.length,
    gold: total.gold,
    predicted: total.predicted,
    iou_thr: opts.iouThr,
    map: harness.coco.AP,
    ap50: harness.coco.AP50,
    ap75: harness.coco.AP75,
    ar100: harness.coco.AR100,
    ...rates(total),
    tp: total.tp,
    fp: total.fp,
    fn: total.fn,
    coco: harness.coco,
    streaming: harness.streaming,
    parity: harness.parity,
    classes,
    classes_without_gold: classes.filter((c) => c.gold === 0).map((c) => c.class_id),
  };
}

/** No frame in the scope: nothing measurable, nothing compared. */
function emptyHarness(epsilon: number): HarnessReport {
  const nulls = <K extends string>(keys: readonly K[]) =>
    Object.fromEntries(keys.map((k) => [k, null])) as Record<K, null>;
  return {
    coco: nulls(COCO_STAT_NAMES),
    per_class: [],
    streaming: nulls(HEADLINE_METRICS),
    parity: { within: true, epsilon, compared: 0, max_abs_delta: 0, diverging: [] },
  };
}

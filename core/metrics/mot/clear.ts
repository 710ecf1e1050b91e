import { assignMostThenCheapest } from '../../tracking/assignment';
import type { MotSequence } from './sequence';

/** CLEAR MOT counts and scores (Bernardin & Stiefelhagen 2008), as py-motmetrics computes them. */
export interface ClearMot {
  /** 1 - (misses + false positives + switches) / ground-truth boxes; null without ground truth. */
  mota: number | null;
  /** Mean IoU of the matched pairs (py-motmetrics reports 1 - this); null without a match. */
  motp: number | null;
  matches: number;
  switches: number;
  false_positives: number;
  misses: number;
  gt_boxes: number;
  hyp_boxes: number;
}

/** A pair is a match from this IoU on (py-motmetrics' iou_matrix max_iou 0.5: distance 1 - IoU ≤ 0.5). */
export const MATCH_IOU = 0.5;
export const isMatch = (iou: number): boolean => 1 - iou <= 1 - MATCH_IOU;

/**
 * Per frame, py-motmetrics' MOTAccumulator.update: pairs matched on an earlier frame are kept while
 * they still overlap enough; the rest are assigned (most matches, then least total 1 - IoU); a
 * ground-truth track matched to another hypothesis than last time it was matched is a switch.
 */
export function clearMot(seq: MotSequence): ClearMot {
  const last = new Map<number, number>();
  let matches = 0;
  let switches = 0;
  let distance = 0;
  for (const f of seq.frames) {
    const gtTaken = f.gt.map(() => false);
    const hypTaken = f.hyp.map(() => false);
    const take = (i: number, j: number) => {
      gtTaken[i] = hypTaken[j] = true;
      distance += 1 - f.iou[i]![j]!;
      last.set(f.gt[i]!, f.hyp[j]!);
    };
    f.gt.forEach((g, i) => {
      if (!last.has(g)) return;
      const j = f.hyp.findIndex((h, k) => !hypTaken[k] && h === last.get(g));
      if (j < 0 || !isMatch(f.iou[i]![j]!)) return;
      take(i, j);
      matches++;
    });
    const rows = f.gt.flatMap((_, i) => (gtTaken[i] ? [] : [i]));
    const cols = f.hyp.flatMap((_, j) => (hypTaken[j] ? [] : [j]));
    const pairs = assignMostThenCheapest(
      rows.map((i) => cols.map((j) => 1 - f.iou[i]![j]!)),
      (r, c) => isMatch(f.iou[rows[r]!]![cols[c]!]!),
    );
    for (const [r, c] of pairs) {
      const [i, j] = [rows[r]!, cols[c]!];
      const previous = last.get(f.gt[i]!);
      if (previous !== undefined && previous !== f.hyp[j]) switches++;
      else matches++;
      take(i, j);
    }
  }
  const detected = matches + switches;
  const misses = seq.gtBoxes - detected;
  const falsePositives = seq.hypBoxes - detected;
  return {
    mota: seq.gtBoxes > 0 ? 1 - (misses + falsePositives + switches) / seq.gtBoxes : null,
    motp: detected > 0 ? 1 - distance / detected : null,
    matches,
    switches,
    false_positives: falsePositives,
    misses,
    gt_boxes: seq.gtBoxes,
    hyp_boxes: seq.hypBoxes,
  };
}

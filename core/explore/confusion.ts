import { munkres } from 'munkres';
import { iou, type Box } from '../geometry/boxes';

/**
 * The confusion matrix of an explore evaluation (docs/quality-explore.md): a run's predictions
 * against reference boxes (a gold set's items, or the accepted human objects of verified frames),
 * matched per frame, every box landing in exactly one cell (true class × predicted class).
 * `BACKGROUND` (-1) is the other side of an unmatched box: (class, -1) is a missed reference
 * object, (-1, class) a false detection.
 *
 * Matching is class-agnostic and optimal, so that a box found with the wrong class lands off the
 * diagonal (a class confusion) instead of counting as one miss and one false detection, which is
 * what a confusion matrix is for. On each frame the references and predictions are paired one to
 * one by an optimal assignment (munkres) that maximises the summed IoU over pairs with
 * IoU ≥ iou_thr; a pair below the threshold is never a match. Greedy matching (COCO's rule, best
 * confidence first) can strand a reference whose only partner was taken by a prediction that had
 * an alternative; the optimum keeps both. Ties on summed IoU go to the reading with more
 * same-class pairs (each adds 1e-9, as in core/quality/agreement.ts). The assignment is solved per
 * connected component of the overlap graph (pairs at or over the threshold), which is exact
 * (components share no candidate pair) and keeps a crowded frame cheap. Inputs are put in a
 * canonical order (box, class, id) first, so the result does not depend on the input order.
 */

export const BACKGROUND = -1;

/** Breaks ties between assignments of equal summed IoU in favour of same-class pairs. */
const CLASS_TIE_WEIGHT = 1e-9;

/**
 * A component whose smaller side holds more boxes than this is matched greedily (highest IoU
 * first, same-class pairs first among equal IoUs) instead of by munkres, whose cost grows with the
 * cube of the component: only a pathological pile of overlapping boxes gets there, and the answer
 * says how many components it was (`greedy_components`).
 */
export const OPTIMAL_COMPONENT_MAX = 150;

export interface MatchStats {
  greedy_components: number;
}

export interface ReferenceBox {
  /** The reference object's id (the live object a gold item was copied from, or the human object). */
  object_id: string;
  frame_id: string;
  class_id: number;
  bbox: Box;
}

export interface PredictionBox {
  prediction_id: string;
  frame_id: string;
  class_id: number;
  conf: number | null;
  bbox: Box;
}

export interface ConfusionMember {
  true_class_id: number;
  pred_class_id: number;
  frame_id: string;
  object_id: string | null;
  prediction_id: string | null;
  /** The prediction's box; the reference's box for a miss. */
  bbox: Box;
  iou: number | null;
  conf: number | null;
}

export interface ConfusionCell {
  true_class_id: number;
  pred_class_id: number;
  count: number;
}

export interface ClassFigures {
  class_id: number;
  /** Reference objects of the class (its row). */
  references: number;
  /** Predictions of the class (its column). */
  predictions: number;
  true_positives: number;
  /** References of the class matched to a prediction of another class. */
  confused_as_other: number;
  missed: number;
  /** Predictions of the class matched to a reference of another class. */
  confused_from_other: number;
  false_detections: number;
  precision: number | null;
  recall: number | null;
}

export interface ConfusionTotals {
  references: number;
  predictions: number;
  matched: number;
  true_positives: number;
  class_confusions: number;
  missed: number;
  false_detections: number;
}

const byBox = (a: { bbox: Box; class_id: number }, b: { bbox: Box; class_id: number }): number => {
  for (let k = 0; k < 4; k++) if (a.bbox[k] !== b.bbox[k]) return a.bbox[k]! - b.bbox[k]!;
  return a.class_id - b.class_id;
};
const compareIds = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One frame's optimal pairs, as [reference index, prediction index, IoU]. */
export function matchFrame(
  refs: readonly ReferenceBox[],
  preds: readonly PredictionBox[],
  iouThr: number,
  stats?: MatchStats,
): Array<[number, number, number]> {
  if (!refs.length || !preds.length) return [];
  const overlaps = refs.map((r) => preds.map((p) => iou(r.bbox, p.bbox)));
  // Connected components of the graph whose edges are pairs at or over the threshold.
  const parent = Array.from({ length: refs.length + preds.length }, (_, i) => i);
  const find = (x: number): number => {
    while (parent[x] !== x) x = parent[x] = parent[parent[x]!]!;
    return x;
  };
  let edges = 0;
  for (let r = 0; r < refs.length; r++)
    for (let p = 0; p < preds.length; p++)
      if (overlaps[r]![p]! >= iouThr) {
        edges++;
        const a = find(r);
        const b = find(refs.length + p);
        if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
      }
  if (!edges) return [];
  const components = new Map<number, { rows: number[]; cols: number[] }>();
  const component = (root: number) => {
    let c = components.get(root);
    if (!c) components.set(root, (c = { rows: [], cols: [] }));
    return c;
  };
  for (let r = 0; r < refs.length; r++) component(find(r)).rows.push(r);
  for (let p = 0; p < preds.length; p++) component(find(refs.length + p)).cols.push(p);
  const pairs: Array<[number, number, number]> = [];
  for (const { rows, cols } of components.values()) {
    if (!rows.length || !cols.length) continue;
    if (rows.length === 1 && cols.length === 1) {
      const v = overlaps[rows[0]!]![cols[0]!]!;
      if (v >= iouThr) pairs.push([rows[0]!, cols[0]!, v]);
      continue;
    }
    if (Math.min(rows.length, cols.length) > OPTIMAL_COMPONENT_MAX) {
      if (stats) stats.greedy_components++;
      pairs.push(...greedyPairs(rows, cols, overlaps, refs, preds, iouThr));
      continue;
    }
    const cost = rows.map((r) =>
      cols.map((p) => {
        const v = overlaps[r]![p]!;
        return v >= iouThr ? -(v + (refs[r]!.class_id === preds[p]!.class_id ? CLASS_TIE_WEIGHT : 0)) : 0;
      }),
    );
    for (const [i, j] of munkres(cost)) {
      const v = overlaps[rows[i]!]![cols[j]!]!;
      if (v >= iouThr) pairs.push([rows[i]!, cols[j]!, v]);
    }
  }
  return pairs.sort((a, b) => a[0] - b[0]);
}

/** Highest IoU first (same class first among equal IoUs, then in canonical order), each box used once. */
function greedyPairs(
  rows: readonly number[],
  cols: readonly number[],
  overlaps: readonly (readonly number[])[],
  refs: readonly ReferenceBox[],
  preds: readonly PredictionBox[],
  iouThr: number,
): Array<[number, number, number]> {
  const candidates: Array<[number, number, number, number]> = [];
  for (const r of rows)
    for (const p of cols) {
      const v = overlaps[r]![p]!;
      if (v >= iouThr) candidates.push([r, p, v, refs[r]!.class_id === preds[p]!.class_id ? 1 : 0]);
    }
  candidates.sort((a, b) => b[2] - a[2] || b[3] - a[3] || a[0] - b[0] || a[1] - b[1]);
  const usedRef = new Set<number>();
  const usedPred = new Set<number>();
  const pairs: Array<[number, number, number]> = [];
  for (const [r, p, v] of candidates) {
    if (usedRef.has(r) || usedPred.has(p)) continue;
    usedRef.add(r);
    usedPred.add(p);
    pairs.push([r, p, v]);
  }
  return pairs;
}

/**
 * Every reference and prediction as a member of its cell: matched pairs (true class, predicted
 * class), unmatched references (class, -1), unmatched predictions (-1, class). Members come out by
 * frame (in `frameIds` order), then references before false detections, each in canonical order.
 * Boxes on frames outside `frameIds` are ignored.
 */
export function confusionMembers(
  refs: readonly ReferenceBox[],
  preds: readonly PredictionBox[],
  frameIds: readonly string[],
  iouThr: number,
  stats?: MatchStats,
): ConfusionMember[] {
  const index = new Map(frameIds.map((id, i) => [id, i]));
  const refsBy: ReferenceBox[][] = frameIds.map(() => []);
  const predsBy: PredictionBox[][] = frameIds.map(() => []);
  for (const r of refs) {
    const i = index.get(r.frame_id);
    if (i !== undefined) refsBy[i]!.push(r);
  }
  for (const p of preds) {
    const i = index.get(p.frame_id);
    if (i !== undefined) predsBy[i]!.push(p);
  }
  const members: ConfusionMember[] = [];
  frameIds.forEach((frameId, f) => {
    const fr = refsBy[f]!.sort((a, b) => byBox(a, b) || compareIds(a.object_id, b.object_id));
    const fp = predsBy[f]!.sort((a, b) => byBox(a, b) || compareIds(a.prediction_id, b.prediction_id));
    const predOfRef = new Map<number, [number, number]>();
    const matchedPred = new Set<number>();
    for (const [r, p, v] of matchFrame(fr, fp, iouThr, stats)) {
      predOfRef.set(r, [p, v]);
      matchedPred.add(p);
    }
    fr.forEach((r, i) => {
      const m = predOfRef.get(i);
      const p = m ? fp[m[0]]! : null;
      members.push({
        true_class_id: r.class_id,
        pred_class_id: p ? p.class_id : BACKGROUND,
        frame_id: frameId,
        object_id: r.object_id,
        prediction_id: p?.prediction_id ?? null,
        bbox: p ? p.bbox : r.bbox,
        iou: m ? m[1] : null,
        conf: p?.conf ?? null,
      });
    });
    fp.forEach((p, j) => {
      if (matchedPred.has(j)) return;
      members.push({
        true_class_id: BACKGROUND,
        pred_class_id: p.class_id,
        frame_id: frameId,
        object_id: null,
        prediction_id: p.prediction_id,
        bbox: p.bbox,
        iou: null,
        conf: p.conf,
      });
    });
  });
  return members;
}

/** Members counted per cell, by true class then predicted class (background first). */
export function confusionCells(members: readonly Pick<ConfusionMember, 'true_class_id' | 'pred_class_id'>[]) {
  const counts = new Map<string, ConfusionCell>();
  for (const m of members) {
    const key = `${m.true_class_id}/${m.pred_class_id}`;
    const cell = counts.get(key);
    if (cell) cell.count++;
    else counts.set(key, { true_class_id: m.true_class_id, pred_class_id: m.pred_class_id, count: 1 });
  }
  return [...counts.values()].sort(
    (a, b) => a.true_class_id - b.true_class_id || a.pred_class_id - b.pred_class_id,
  );
}

/** Ratio, or null when there is nothing to divide by. */
const ratio = (num: number, den: number): number | null => (den > 0 ? num / den : null);

/**
 * Per class, from the cells: precision is the diagonal over the class's column (every prediction of
 * it, false detections included), recall the diagonal over its row (every reference of it, misses
 * included). Classes in class-id order.
 */
export function classFigures(cells: readonly ConfusionCell[]): ClassFigures[] {
  const figures = new Map<number, ClassFigures>();
  const of = (c: number) => {
    let f = figures.get(c);
    if (!f)
      figures.set(
        c,
        (f = {
          class_id: c,
          references: 0,
          predictions: 0,
          true_positives: 0,
          confused_as_other: 0,
          missed: 0,
          confused_from_other: 0,
          false_detections: 0,
          precision: null,
          recall: null,
        }),
      );
    return f;
  };
  for (const { true_class_id: t, pred_class_id: p, count } of cells) {
    if (t !== BACKGROUND) {
      const row = of(t);
      row.references += count;
      if (p === t) row.true_positives += count;
      else if (p === BACKGROUND) row.missed += count;
      else row.confused_as_other += count;
    }
    if (p !== BACKGROUND) {
      const col = of(p);
      col.predictions += count;
      if (t === BACKGROUND) col.false_detections += count;
      else if (t !== p) col.confused_from_other += count;
    }
  }
  return [...figures.values()]
    .sort((a, b) => a.class_id - b.class_id)
    .map((f) => ({
      ...f,
      precision: ratio(f.true_positives, f.predictions),
      recall: ratio(f.true_positives, f.references),
    }));
}

export function confusionTotals(cells: readonly ConfusionCell[]): ConfusionTotals {
  const t: ConfusionTotals = {
    references: 0,
    predictions: 0,
    matched: 0,
    true_positives: 0,
    class_confusions: 0,
    missed: 0,
    false_detections: 0,
  };
  for (const c of cells) {
    if (c.true_class_id !== BACKGROUND) t.references += c.count;
    if (c.pred_class_id !== BACKGROUND) t.predictions += c.count;
    if (c.true_class_id === BACKGROUND) t.false_detections += c.count;
    else if (c.pred_class_id === BACKGROUND) t.missed += c.count;
    else {
      t.matched += c.count;
      if (c.true_class_id === c.pred_class_id) t.true_positives += c.count;
      else t.class_confusions += c.count;
    }
  }
  return t;
}

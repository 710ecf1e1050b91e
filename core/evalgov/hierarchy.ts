import type { ClassEvaluation } from './evaluate';
import { rates } from './match';

/**
 * An evaluation's per-class figures rolled up by the ontology's two encoded levels, l0 and l1.
 * Both averages, because they answer different questions:
 * - **micro** pools the counts at iou_thr (TP, FP, FN summed over the group's classes, then
 *   precision and recall of the sums): how the group does per object, so common classes weigh more;
 * - **macro** averages the per-class figures (COCO AP, AP50, AR100, precision, recall) over the
 *   group's classes that have gold boxes, each class once: how the group does per class, so a rare
 *   class that fails shows. A figure undefined for a class (precision without predictions) is left
 *   out of that figure's mean. AP has no micro form: it would need the group's boxes re-evaluated
 *   as one class, which merges classes COCO keeps apart.
 * Classes predicted without gold count in the micro sums (as false positives), not in the macro.
 */

export interface OntologyRow {
  id: number;
  name: string;
  l0: string;
  l1: string;
}

export interface RollUp {
  l0: string;
  l1?: string;
  /** Classes of the group in the evaluation, and those of them with gold boxes. */
  classes: number;
  classes_with_gold: number;
  gold: number;
  predicted: number;
  tp: number;
  fp: number;
  fn: number;
  micro: { precision: number | null; recall: number | null };
  macro: {
    ap: number | null;
    ap50: number | null;
    ar100: number | null;
    precision: number | null;
    recall: number | null;
  };
}

const UNKNOWN = 'unknown';

const mean = (values: Array<number | null>): number | null => {
  const defined = values.filter((v): v is number => v !== null);
  return defined.length ? defined.reduce((s, v) => s + v, 0) / defined.length : null;
};

function rollUp(classes: readonly ClassEvaluation[]): Omit<RollUp, 'l0' | 'l1'> {
  const sums = { gold: 0, predicted: 0, tp: 0, fp: 0, fn: 0 };
  for (const c of classes) {
    sums.gold += c.gold;
    sums.predicted += c.predicted;
    sums.tp += c.tp;
    sums.fp += c.fp;
    sums.fn += c.fn;
  }
  const withGold = classes.filter((c) => c.gold > 0);
  return {
    classes: classes.length,
    classes_with_gold: withGold.length,
    ...sums,
    micro: rates(sums),
    macro: {
      ap: mean(withGold.map((c) => c.ap)),
      ap50: mean(withGold.map((c) => c.ap50)),
      ar100: mean(withGold.map((c) => c.ar100)),
      precision: mean(withGold.map((c) => c.precision)),
      recall: mean(withGold.map((c) => c.recall)),
    },
  };
}

/** Groups by l0 and by (l0, l1), each sorted by name; classes missing from the ontology go under `unknown`. */
export function hierarchicalRollUp(
  classes: readonly ClassEvaluation[],
  ontology: readonly OntologyRow[],
): { l0: RollUp[]; l1: RollUp[] } {
  const byId = new Map(ontology.map((o) => [o.id, o]));
  const groups = (keyOf: (c: ClassEvaluation) => string) => {
    const out = new Map<string, ClassEvaluation[]>();
    for (const c of classes) {
      const k = keyOf(c);
      const list = out.get(k);
      if (list) list.push(c);
      else out.set(k, [c]);
    }
    return [...out].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  };
  const l0Of = (c: ClassEvaluation) => byId.get(c.class_id)?.l0 ?? UNKNOWN;
  const l1Of = (c: ClassEvaluation) => byId.get(c.class_id)?.l1 ?? UNKNOWN;
  return {
    l0: groups(l0Of).map(([l0, members]) => ({ l0, ...rollUp(members) })),
    l1: groups((c) => `${l0Of(c)}\u0000${l1Of(c)}`).map(([key, members]) => {
      const [l0, l1] = key.split('\u0000') as [string, string];
      return { l0, l1, ...rollUp(members) };
    }),
  };
}

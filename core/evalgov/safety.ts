import { MIN_CONTROL_SAMPLE } from '../control';
import { SAFETY_L1, isSafetyL1, type SafetyL1 } from '../ontology';
import { wilsonInterval } from '../quality/stats';
import type { Counts } from './match';
import type { OntologyRow } from './hierarchy';

/**
 * Recall of the safety classes against their floors (spec Other lifecycles: the champion gate holds
 * safety-class recall floors). The safety classes are those whose l1 is in core/ontology's
 * SAFETY_L1 — `vru`, `animal` and `two_wheeler`: the spec names two disagreeing sets, and the
 * union is the one a floor can rely on (a rider's two-wheeler is as safety-relevant as the rider;
 * missing one is never the safe error).
 *
 * A class's floor is, first found: its own (`by_class`), its l1's (`by_l1`), the `default`.
 * Recall is TP / gold at the operating point (predictions with conf ≥ conf_thr, matched at
 * iou_thr), with its Wilson interval; a class passes when its recall reaches its floor. Only classes
 * with gold boxes are judged; when none has any, the verdict is null (not measured), never a pass.
 */

export const DEFAULT_SAFETY_FLOOR = 0.9;

export interface SafetyFloors {
  default: number;
  by_l1: Partial<Record<SafetyL1, number>>;
  /** By class id. */
  by_class: ReadonlyMap<number, number>;
}

export interface SafetyClassRecall {
  class_id: number;
  class_name: string;
  l1: SafetyL1;
  gold: number;
  tp: number;
  fn: number;
  recall: number;
  /** Wilson score interval of the recall at 1 - alpha. */
  recall_ci: { lo: number; hi: number };
  floor: number;
  floor_from: 'class' | 'l1' | 'default';
  passed: boolean;
  below_min_sample: boolean;
}

export interface SafetyRecall {
  /** Every class judged reached its floor; null when no safety class has gold boxes. */
  passed: boolean | null;
  safety_l1: readonly string[];
  classes: SafetyClassRecall[];
  failing: string[];
  /** Pooled per l1 (micro): the group's TP over its gold. */
  by_l1: Array<{ l1: SafetyL1; gold: number; tp: number; recall: number | null }>;
  reason: string | null;
}

export function safetyRecall(
  counts: ReadonlyArray<Counts & { class_id: number }>,
  ontology: readonly OntologyRow[],
  floors: SafetyFloors,
  alpha = 0.05,
): SafetyRecall {
  const byId = new Map(ontology.map((o) => [o.id, o]));
  const classes: SafetyClassRecall[] = [];
  for (const c of counts) {
    const o = byId.get(c.class_id);
    if (!o || !isSafetyL1(o.l1) || c.gold === 0) continue;
    const own = floors.by_class.get(c.class_id);
    const ofL1 = floors.by_l1[o.l1];
    const [floor, floorFrom] =
      own !== undefined
        ? [own, 'class' as const]
        : ofL1 !== undefined
          ? [ofL1, 'l1' as const]
          : [floors.default, 'default' as const];
    const recall = c.tp / c.gold;
    const ci = wilsonInterval(c.tp, c.gold, alpha);
    classes.push({
      class_id: c.class_id,
      class_name: o.name,
      l1: o.l1,
      gold: c.gold,
      tp: c.tp,
      fn: c.fn,
      recall,
      recall_ci: { lo: ci.lo, hi: ci.hi },
      floor,
      floor_from: floorFrom,
      passed: recall >= floor,
      below_min_sample: c.gold < MIN_CONTROL_SAMPLE,
    });
  }
  const by_l1 = SAFETY_L1.map((l1) => {
    const mine = classes.filter((c) => c.l1 === l1);
    const gold = mine.reduce((s, c) => s + c.gold, 0);
    const tp = mine.reduce((s, c) => s + c.tp, 0);
    return { l1, gold, tp, recall: gold ? tp / gold : null };
  });
  const failing = classes.filter((c) => !c.passed).map((c) => c.class_name);
  return {
    passed: classes.length ? failing.length === 0 : null,
    safety_l1: SAFETY_L1,
    classes,
    failing,
    by_l1,
    reason: classes.length ? null : 'no safety-class object in the gold scope: recall not measured',
  };
}

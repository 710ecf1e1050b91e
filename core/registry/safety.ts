import { MIN_CONTROL_SAMPLE } from '../control';
import type { Counts } from '../evalgov';

/**
 * The gate's safety floors: every safety class with gold boxes in the gold set must keep its AP
 * (COCO AP at IoU .50) and its recall at the operating point (predictions with conf ≥ conf_thr,
 * matched at IoU .50) at or over the configured floors. A safety class without gold boxes cannot
 * be judged: it is listed as unmeasured, never passed silently; when no safety class has gold the
 * verdict is null and the report says so.
 */

export interface SafetyClass {
  class_id: number;
  class_name: string;
}

export interface SafetyFloorClass extends SafetyClass {
  gold: number;
  tp: number;
  ap50: number | null;
  recall: number;
  ap_floor: number;
  recall_floor: number;
  /** The floors this class falls under: `ap`, `recall`. */
  under: Array<'ap' | 'recall'>;
  below_min_sample: boolean;
}

export interface SafetyFloors {
  /** Every judged class kept both floors; null when none could be judged. */
  passed: boolean | null;
  ap_floor: number;
  recall_floor: number;
  conf_thr: number;
  classes: SafetyFloorClass[];
  failing: SafetyFloorClass[];
  /** Safety classes with no gold box in the set. */
  unmeasured: string[];
}

export function safetyFloors(
  safety: readonly SafetyClass[],
  /** Per class, counts at the operating point. */
  counts: ReadonlyArray<Counts & { class_id: number }>,
  /** Per class, COCO AP at IoU .50. */
  ap50: ReadonlyMap<number, number | null>,
  floors: { apFloor: number; recallFloor: number; confThr: number },
): SafetyFloors {
  const countOf = new Map(counts.map((c) => [c.class_id, c]));
  const classes: SafetyFloorClass[] = [];
  const unmeasured: string[] = [];
  for (const s of safety) {
    const c = countOf.get(s.class_id);
    if (!c || c.gold === 0) {
      unmeasured.push(s.class_name);
      continue;
    }
    const ap = ap50.get(s.class_id) ?? null;
    const recall = c.tp / c.gold;
    const under: Array<'ap' | 'recall'> = [];
    if (ap === null || ap < floors.apFloor) under.push('ap');
    if (recall < floors.recallFloor) under.push('recall');
    classes.push({
      ...s,
      gold: c.gold,
      tp: c.tp,
      ap50: ap,
      recall,
      ap_floor: floors.apFloor,
      recall_floor: floors.recallFloor,
      under,
      below_min_sample: c.gold < MIN_CONTROL_SAMPLE,
    });
  }
  const failing = classes.filter((c) => c.under.length > 0);
  return {
    passed: classes.length ? failing.length === 0 : null,
    ap_floor: floors.apFloor,
    recall_floor: floors.recallFloor,
    conf_thr: floors.confThr,
    classes,
    failing,
    unmeasured,
  };
}

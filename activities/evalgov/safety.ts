import { InputError } from '../../core/errors';
import {
  DEFAULT_SAFETY_FLOOR,
  classCounts,
  inScope,
  matchRun,
  safetyRecall,
  type SafetyFloors,
} from '../../core/evalgov';
import { isSafetyL1, type SafetyL1 } from '../../core/ontology';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { classIdsOf } from '../quality/models';
import { recordOperation } from '../quality/operations';
import { loadGold, loadPredictions, oneSliceScope, ontologyRows, usableRun } from './scope';

export const SAFETY_OP = 'safety_recall';

export interface SafetyInput {
  run_id: string;
  gold_id: string;
  slice_id?: string | undefined;
  iou_thr: number;
  conf_thr: number;
  alpha: number;
  floors?:
    | {
        default?: number | undefined;
        by_l1?: Partial<Record<SafetyL1, number>> | undefined;
        by_class?: Record<string, number> | undefined;
      }
    | undefined;
}

/**
 * Recall of the safety classes of a run against gold, each against its floor (core/evalgov/safety):
 * a reconstructed run is refused by name; a floor on a class outside the safety set is refused
 * (422), so a floor meant for a safety class cannot be silently ignored.
 */
export async function safetyRecallOf(db: Db, input: SafetyInput, actor: Actor) {
  const run = await usableRun(db, input.run_id);
  const { gold, boxes } = await loadGold(db, input.gold_id);
  const [predictions, { slice, scope, sliceParams }, ontology] = await Promise.all([
    loadPredictions(db, run, gold.frameIds),
    oneSliceScope(db, input.slice_id, gold.frameIds),
    ontologyRows(db),
  ]);
  const byClass = new Map<number, number>();
  const classFloors = Object.entries(input.floors?.by_class ?? {});
  if (classFloors.length) {
    const ids = await classIdsOf(
      db,
      classFloors.map(([name]) => name),
      'body.floors.by_class',
    );
    const l1Of = new Map(ontology.map((o) => [o.id, o.l1]));
    const outside = classFloors.filter(([name]) => !isSafetyL1(l1Of.get(ids.get(name)!) ?? ''));
    if (outside.length)
      throw new InputError(
        `not a safety class (l1 vru, animal or two_wheeler): ${outside.map(([n]) => n).join(', ')}`,
        outside.map(([n]) => ({ field: `body.floors.by_class.${n}`, message: 'not a safety class' })),
      );
    for (const [name, floor] of classFloors) byClass.set(ids.get(name)!, floor);
  }
  const floors: SafetyFloors = {
    default: input.floors?.default ?? DEFAULT_SAFETY_FLOOR,
    by_l1: input.floors?.by_l1 ?? {},
    by_class: byClass,
  };
  const matching = matchRun(
    inScope(boxes, scope),
    inScope(predictions, scope),
    scope.frameIds,
    input.iou_thr,
  );
  const result = safetyRecall(classCounts(matching, input.conf_thr), ontology, floors, input.alpha);
  const params = {
    run_id: run.id,
    gold_id: gold.id,
    model_version: run.modelVersion,
    ...sliceParams,
    iou_thr: input.iou_thr,
    conf_thr: input.conf_thr,
    alpha: input.alpha,
    floors: {
      default: floors.default,
      by_l1: floors.by_l1,
      by_class: Object.fromEntries(classFloors),
    },
  };
  const op = await recordOperation(db, {
    opType: SAFETY_OP,
    subjectIds: [run.id, gold.id, run.modelVersion, ...(slice ? [slice.slice_id] : [])],
    params,
    result,
    actor,
  });
  return { operation_id: op.id, ...params, frames: scope.frameIds.length, ...result };
}

/**
 * Which class moves are plausible (docs/track-relabel.md): the one rule a bulk class move obeys, so
 * a track relabel, a reconcile and a natural-language edit refuse the same moves.
 *
 * A move is plausible when both classes share their **l1** group (car → van or truck, bicycle ↔
 * motorcycle, pedestrian → bicyclist); any move across l1 groups is refused (car → pedestrian,
 * motorcycle → motorcyclist, cargo_bicycle → cycle_rickshaw).
 *
 * Why l1 and no cross-l1 exceptions: l1 is what the safety floors, gates and slices count by
 * (`SAFETY_L1` holds vru, animal, two_wheeler but not vehicle), so a move across l1 changes which
 * floor an object counts for. The seed's cross-l1 near neighbours were each weighed and refused:
 * a rider and the two-wheeler under it are two objects with two boxes, not one mislabelled object;
 * a cargo bicycle (two_wheeler) and a cycle rickshaw (vehicle) are confusable, but the move takes a
 * safety-class object out of the safety set. Such a move is a per-object decision (single review),
 * never a bulk one. Sharing an l0 is not enough: `object` holds vehicles, people and animals alike.
 */

/** The name a refusal carries, so a caller can tell this rule from other refusals. */
export const CLASS_MOVE_RULE = 'same_l1' as const;

/** What the rule reads of a class: its name and groups, from the live ontology or the seed. */
export interface ClassGroups {
  name: string;
  l0: string;
  l1: string;
}

export interface ClassMoveRefusal {
  rule: typeof CLASS_MOVE_RULE;
  from_class: string;
  from_l1: string;
  to_class: string;
  to_l1: string;
  reason: string;
}

/** Null when moving an object from `from` to `to` is plausible, else why not. Staying put is plausible. */
export function classMoveRefusal(from: ClassGroups, to: ClassGroups): ClassMoveRefusal | null {
  if (from.l0 === to.l0 && from.l1 === to.l1) return null;
  return {
    rule: CLASS_MOVE_RULE,
    from_class: from.name,
    from_l1: from.l1,
    to_class: to.name,
    to_l1: to.l1,
    reason: `${from.name} (${from.l1}) → ${to.name} (${to.l1}) crosses l1 groups; a class move stays within one l1 group`,
  };
}

export const isPlausibleClassMove = (from: ClassGroups, to: ClassGroups): boolean =>
  classMoveRefusal(from, to) === null;

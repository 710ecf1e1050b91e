import type { SlicePredicate } from '../curation/slice';

/**
 * What a curation slice means for an evaluation. A slice predicate selects live annotation
 * objects; an evaluation compares frozen gold boxes with a run's predictions, which have no review
 * state or source. So a slice is split in three:
 *
 * - **frame conditions** (`session_ids`, `exclude_session_ids`, `context` incl. `lighting`, `region`, `track_event`)
 *   choose the gold frames evaluated: a frame is in the slice when it satisfies all of them
 *   (`region` and `track_event: true` match no frame yet, as everywhere slices are read);
 * - **class conditions** (`classes` with their descendants, `l1`, `rarity_bands`) choose the
 *   classes evaluated: gold boxes and predictions of other classes are left out on those frames;
 * - **object conditions** (`states`, `sources`, `min_conf`) describe live objects' review state and
 *   are not applied: every gold box is an accepted human decision, and a run's every prediction
 *   counts (a confidence cut would truncate the precision-recall curve AP is measured on). They are
 *   reported as `not_applied`, never silently dropped.
 *
 * A slice without frame conditions keeps every gold frame; without class conditions, every class.
 */

export const FRAME_KEYS = ['session_ids', 'exclude_session_ids', 'context', 'region', 'track_event'] as const;
export const CLASS_KEYS = ['classes', 'l1', 'rarity_bands'] as const;
export const OBJECT_KEYS = ['states', 'sources', 'min_conf'] as const;

export interface SplitPredicate {
  /** The frame conditions alone, or null when there are none (every frame). */
  frame: SlicePredicate | null;
  /** The class conditions alone, or null when there are none (every class). */
  classes: SlicePredicate | null;
  /** Object conditions present in the predicate, which the evaluation does not apply. */
  not_applied: Array<(typeof OBJECT_KEYS)[number]>;
}

function pick(p: SlicePredicate, keys: readonly (keyof SlicePredicate)[]): SlicePredicate | null {
  const out: Record<string, unknown> = {};
  for (const k of keys) if (p[k] !== undefined) out[k] = p[k];
  return Object.keys(out).length ? (out as SlicePredicate) : null;
}

export function splitPredicate(p: SlicePredicate): SplitPredicate {
  return {
    frame: pick(p, FRAME_KEYS),
    classes: pick(p, CLASS_KEYS),
    not_applied: OBJECT_KEYS.filter((k) => p[k] !== undefined),
  };
}

/** A scope: the frames evaluated, in the gold set's order, and the classes (null: all). */
export interface Scope {
  frameIds: string[];
  classIds: ReadonlySet<number> | null;
}

/** The boxes of a scope: on its frames, of its classes. */
export function inScope<T extends { frame_id: string; class_id: number }>(
  items: readonly T[],
  scope: Scope,
): T[] {
  const frames = new Set(scope.frameIds);
  return items.filter(
    (i) => frames.has(i.frame_id) && (scope.classIds === null || scope.classIds.has(i.class_id)),
  );
}

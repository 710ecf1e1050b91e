import type { ClassCandidate } from '../detect/classify-box';

/** What a corpus relabel weighs for one object (docs/relabel.md). */
export interface RelabelRule {
  /** The classifier's best class must score at least this to move an object. */
  minScore: number;
  /**
   * The best class must beat the object's own class by this much when the classifier also sees
   * the object's class on the box: a near tie is the detector's doubt, not a correction.
   */
  minMargin: number;
}

export type RelabelDecision =
  | { move: true; from: string; to: string; score: number; own_score: number | null }
  | { move: false; reason: 'no_detection' | 'agrees' | 'below_min_score' | 'ambiguous' | 'unknown_class' };

/**
 * Decides whether the classifier's view of a box relabels its object: the best candidate must be
 * another class, known to the ontology, confident enough, and clearly ahead of the object's own
 * class. Anything else keeps the object as it is, with the reason.
 */
export function decideRelabel(
  current: string,
  candidates: readonly ClassCandidate[],
  known: ReadonlySet<string>,
  rule: RelabelRule,
): RelabelDecision {
  const best = candidates[0];
  if (!best) return { move: false, reason: 'no_detection' };
  if (best.className === current) return { move: false, reason: 'agrees' };
  if (best.score < rule.minScore) return { move: false, reason: 'below_min_score' };
  const own = candidates.find((c) => c.className === current);
  if (own && best.score - own.score < rule.minMargin) return { move: false, reason: 'ambiguous' };
  if (!known.has(best.className)) return { move: false, reason: 'unknown_class' };
  return { move: true, from: current, to: best.className, score: best.score, own_score: own?.score ?? null };
}

/** What a relabel run did, added up page by page (its `changes`, with the revert's tally beside it). */
export interface RelabelTally {
  frames_checked: number;
  objects_checked: number;
  objects_relabelled: number;
  /** `from→to` and how many objects moved that way. */
  moves: Record<string, number>;
  /** Objects kept, by why. */
  kept: Record<string, number>;
  frames_failed: number;
  /** The first failures, with why (at most RELABEL_FAILURES_KEPT). */
  failures: Array<{ frame_id: string; reason: string }>;
}

export const RELABEL_FAILURES_KEPT = 20;

export const emptyRelabelTally = (): RelabelTally => ({
  frames_checked: 0,
  objects_checked: 0,
  objects_relabelled: 0,
  moves: {},
  kept: {},
  frames_failed: 0,
  failures: [],
});

const addCounts = (a: Record<string, number>, b: Record<string, number>) => {
  const sum = { ...a };
  for (const [k, n] of Object.entries(b)) sum[k] = (sum[k] ?? 0) + n;
  return sum;
};

export function addRelabelTally(a: RelabelTally, b: RelabelTally): RelabelTally {
  return {
    frames_checked: a.frames_checked + b.frames_checked,
    objects_checked: a.objects_checked + b.objects_checked,
    objects_relabelled: a.objects_relabelled + b.objects_relabelled,
    moves: addCounts(a.moves, b.moves),
    kept: addCounts(a.kept, b.kept),
    frames_failed: a.frames_failed + b.frames_failed,
    failures: [...a.failures, ...b.failures].slice(0, RELABEL_FAILURES_KEPT),
  };
}

/** Counts one object's decision into the tally. */
export function countDecision(tally: RelabelTally, decision: RelabelDecision): void {
  tally.objects_checked++;
  if (decision.move) {
    tally.objects_relabelled++;
    const key = `${decision.from}→${decision.to}`;
    tally.moves[key] = (tally.moves[key] ?? 0) + 1;
  } else tally.kept[decision.reason] = (tally.kept[decision.reason] ?? 0) + 1;
}

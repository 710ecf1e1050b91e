import { rarityBand, type RarityBand } from '../curation/slice';
import { rarity } from '../review/ranking';

/**
 * The parts of an active-learning score (docs/activelearn.md). Each part is a value in [0, 1];
 * a frame's score is the weighted sum of its parts with weights that sum to 1, so a score is
 * in [0, 1] too and every contribution can be read off beside its weight.
 *
 * - uncertainty: how little the machine's own labels on the frame can be trusted. Per object, the
 *   larger of the confidence margin (1 at the decision threshold, falling linearly to 0 at conf 0
 *   and at conf 1) and the class disagreement of the fusion paths (provenance entropy over
 *   ENTROPY_FULL_BITS). A frame takes its most uncertain object: one doubtful box is enough for a
 *   person to look at the frame.
 * - rarity: the corpus rarity of the frame's rarest class, ln(1 + N / n_c) / ln(1 + N) as the review
 *   queue computes it (core/review/ranking.ts), with the curation band of the class's share.
 * - diversity: the distance of the frame's embedding to the nearest frame already picked, relative
 *   to the farthest candidate (core/activelearn/select.ts). It depends on the picks before it.
 */
export const SCORE_PARTS = ['uncertainty', 'rarity', 'diversity'] as const;
export type ScorePart = (typeof SCORE_PARTS)[number];
export type Weights = Record<ScorePart, number>;

/**
 * Uncertainty first: a label only teaches the model where it was unsure. Rarity next: the rare
 * classes are where the champion is weakest and where one label moves a class's AP most. Diversity
 * last but not zero: it stops a batch from being ten near-copies of one uncertain scene.
 */
export const DEFAULT_WEIGHTS: Weights = { uncertainty: 0.5, rarity: 0.3, diversity: 0.2 };

/** Provenance entropy (bits) at which the fusion paths' class dispute counts as full uncertainty: two classes evenly split. */
export const ENTROPY_FULL_BITS = 1;

const { min, max } = Math;

/** Weights scaled to sum to 1; each must be a finite number ≥ 0 and at least one above 0. */
export function normaliseWeights(weights: Weights): Weights {
  const total = SCORE_PARTS.reduce((sum, part) => sum + weights[part], 0);
  for (const part of SCORE_PARTS)
    if (!Number.isFinite(weights[part]) || weights[part] < 0)
      throw new RangeError(`weight ${part} must be a finite number ≥ 0`);
  if (!(total > 0)) throw new RangeError('at least one weight must be above 0');
  return {
    uncertainty: weights.uncertainty / total,
    rarity: weights.rarity / total,
    diversity: weights.diversity / total,
  };
}

/**
 * 1 at the decision threshold, falling linearly to 0 at conf 0 and at conf 1 (at threshold 0.5 it is
 * the review queue's 1 − |2·conf − 1|). An object without a confidence counts as fully uncertain, as
 * it does in the review queue: nothing vouches for it.
 */
export function confidenceMargin(conf: number | null, threshold: number): number {
  if (conf === null) return 1;
  const c = min(1, max(0, conf));
  if (c >= threshold) return threshold >= 1 ? 1 : 1 - (c - threshold) / (1 - threshold);
  return threshold <= 0 ? 1 : 1 - (threshold - c) / threshold;
}

/** The fusion paths' class dispute: provenance entropy over ENTROPY_FULL_BITS, at most 1; none recorded is 0. */
export const classDisagreement = (entropyBits: number | null): number =>
  entropyBits === null || !(entropyBits > 0) ? 0 : min(1, entropyBits / ENTROPY_FULL_BITS);

/** A machine-made object of a candidate frame, as scoring reads it. */
export interface CandidateObject {
  id: string;
  className: string;
  conf: number | null;
  /** The latest provenance's class entropy in bits; null without provenance. */
  entropy: number | null;
}

/** Objects per class over the whole corpus (every object, every source), as the curation summary counts them. */
export interface ClassCounts {
  total: number;
  byClass: ReadonlyMap<string, number>;
}

export interface UncertaintyPart {
  value: number;
  /** The object that decided it, with what was read of it. */
  object_id: string;
  class_name: string;
  conf: number | null;
  entropy: number | null;
  margin: number;
  disagreement: number;
}

export interface RarityPart {
  value: number;
  class_name: string;
  /** The class's share of every object in the corpus, and its curation band. */
  share: number;
  band: RarityBand;
}

/** Strictly greater, or equal with the smaller id: every maximum below is deterministic. */
const beats = (value: number, id: string, best: { value: number; id: string } | null): boolean =>
  best === null || value > best.value || (value === best.value && id < best.id);

/** The frame's most uncertain object (ties: the smallest object id); null for a frame without one. */
export function frameUncertainty(
  objects: readonly CandidateObject[],
  threshold: number,
): UncertaintyPart | null {
  let best: (UncertaintyPart & { id: string }) | null = null;
  for (const o of objects) {
    const margin = confidenceMargin(o.conf, threshold);
    const disagreement = classDisagreement(o.entropy);
    const value = max(margin, disagreement);
    if (beats(value, o.id, best))
      best = {
        id: o.id,
        value,
        object_id: o.id,
        class_name: o.className,
        conf: o.conf,
        entropy: o.entropy,
        margin,
        disagreement,
      };
  }
  if (!best) return null;
  const { id: _id, ...part } = best;
  return part;
}

/** The frame's rarest class (ties: the smaller class name); null for a frame without objects. */
export function frameRarity(objects: readonly CandidateObject[], counts: ClassCounts): RarityPart | null {
  let best: (RarityPart & { id: string }) | null = null;
  for (const o of objects) {
    // A class the count has not seen yet (written since it was read) counts as seen once.
    const n = max(1, counts.byClass.get(o.className) ?? 0);
    const total = max(counts.total, n);
    const value = rarity(n, total);
    if (beats(value, o.className, best))
      best = {
        id: o.className,
        value,
        class_name: o.className,
        share: n / total,
        band: rarityBand(n / total),
      };
  }
  if (!best) return null;
  const { id: _id, ...part } = best;
  return part;
}

/** The diversity part of one pick, with the distance it was measured from. */
export interface DiversityPart {
  value: number;
  embedded: boolean;
  /** Euclidean distance to the nearest earlier pick (`picks`) or to the candidates' mean (`mean`, before any pick); null without an embedding. */
  distance: number | null;
  measured_from: 'mean' | 'picks' | null;
}

export interface ExplainedScore {
  score: number;
  parts: {
    uncertainty: UncertaintyPart & { weight: number; contribution: number };
    rarity: RarityPart & { weight: number; contribution: number };
    diversity: DiversityPart & { weight: number; contribution: number };
  };
}

/** The score as the weighted sum of its parts, each part with its weight and contribution. */
export function explainScore(
  weights: Weights,
  uncertainty: UncertaintyPart,
  rarityPart: RarityPart,
  diversity: DiversityPart,
): ExplainedScore {
  const withWeight = <P extends { value: number }>(part: P, weight: number) => ({
    ...part,
    weight,
    contribution: weight * part.value,
  });
  const parts = {
    uncertainty: withWeight(uncertainty, weights.uncertainty),
    rarity: withWeight(rarityPart, weights.rarity),
    diversity: withWeight(diversity, weights.diversity),
  };
  return {
    score: parts.uncertainty.contribution + parts.rarity.contribution + parts.diversity.contribution,
    parts,
  };
}

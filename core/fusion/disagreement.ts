import { rarity } from '../review/ranking';

/**
 * Where the paths disagreed on a fused object, and how much that matters: the ranking behind
 * POST /api/fusion/disagreements/rank (docs/autolabel.md). Disagreement is the largest of
 *
 * - class dispute: the class entropy over its maximum for the classes proposed (1 when the
 *   proposals split evenly);
 * - a missing path: 1 − agreement, the share of the paths that ran and did not propose the object
 *   (counted only when at least two paths ran — one path cannot disagree with itself);
 * - the verifier: 1 when it rejected the object or relabelled it.
 *
 * Score = disagreement × class rarity (as the review queue weighs classes), so a split call on a
 * rare class comes before the same split on a common one.
 */
export type DisagreementKind =
  'class_disagreement' | 'path_missing' | 'verifier_rejected' | 'verifier_relabelled';

export interface FusionRecord {
  agreement: number;
  entropy: number;
  classDistribution: Record<string, number>;
  pathsRan: readonly string[];
  paths: readonly string[];
  verifierVerdict: string | null;
}

export interface Disagreement {
  disagreement: number;
  kinds: DisagreementKind[];
  /** Paths that ran and did not propose the object. */
  silent: string[];
}

export function disagreementOf(r: FusionRecord): Disagreement {
  const kinds: DisagreementKind[] = [];
  const proposed = Object.keys(r.classDistribution).length;
  const classDispute = proposed > 1 && r.entropy > 0 ? Math.min(1, r.entropy / Math.log2(proposed)) : 0;
  if (classDispute > 0) kinds.push('class_disagreement');
  const silent = r.pathsRan.filter((p) => !r.paths.includes(p));
  const missing = r.pathsRan.length >= 2 && silent.length > 0 ? Math.min(1, Math.max(0, 1 - r.agreement)) : 0;
  if (missing > 0) kinds.push('path_missing');
  let verifier = 0;
  if (r.verifierVerdict === 'reject' || r.verifierVerdict === 'relabel') {
    verifier = 1;
    kinds.push(r.verifierVerdict === 'reject' ? 'verifier_rejected' : 'verifier_relabelled');
  }
  return {
    disagreement: Math.max(classDispute, missing, verifier),
    kinds,
    silent: missing > 0 ? silent : [],
  };
}

export const disagreementScore = (d: Disagreement, classCount: number, total: number): number =>
  d.disagreement * rarity(classCount, total);

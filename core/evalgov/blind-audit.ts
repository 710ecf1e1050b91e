import { MIN_CONTROL_SAMPLE } from '../control';
import { wilsonInterval } from '../quality/stats';

/**
 * Blind audits: a seeded sample of objects whose source and confidence are hidden from the
 * reviewers who judge them `correct` or `incorrect`. Precision is the share judged correct, with
 * its Wilson score interval (statsmodels' proportion_confint method='wilson', core/quality/stats);
 * the Wilson interval stays inside [0, 1] and behaves at 0 and n successes, where a normal
 * interval collapses. Figures from fewer than 25 verdicts (spec Limits) carry `below_min_sample`.
 */

export const AUDIT_VERDICTS = ['correct', 'incorrect'] as const;
export type AuditVerdict = (typeof AUDIT_VERDICTS)[number];

export interface AuditItemRecord {
  class_id: number;
  /** The object's source when it was sampled (hidden from reviewers). */
  source: string;
  verdict: AuditVerdict | null;
}

export interface PrecisionEstimate {
  items: number;
  labeled: number;
  remaining: number;
  correct: number;
  /** correct / labeled; null before the first verdict. */
  precision: number | null;
  /** Wilson interval at 1 - alpha; null before the first verdict. */
  interval: { lo: number; hi: number } | null;
  alpha: number;
  below_min_sample: boolean;
}

export function precisionEstimate(items: readonly AuditItemRecord[], alpha = 0.05): PrecisionEstimate {
  const labeled = items.filter((i) => i.verdict !== null);
  const correct = labeled.filter((i) => i.verdict === 'correct').length;
  const w = labeled.length ? wilsonInterval(correct, labeled.length, alpha) : null;
  return {
    items: items.length,
    labeled: labeled.length,
    remaining: items.length - labeled.length,
    correct,
    precision: w ? w.proportion : null,
    interval: w ? { lo: w.lo, hi: w.hi } : null,
    alpha,
    below_min_sample: labeled.length < MIN_CONTROL_SAMPLE,
  };
}

function groupBy<K>(
  items: readonly AuditItemRecord[],
  key: (i: AuditItemRecord) => K,
): Map<K, AuditItemRecord[]> {
  const out = new Map<K, AuditItemRecord[]>();
  for (const i of items) {
    const k = key(i);
    const list = out.get(k);
    if (list) list.push(i);
    else out.set(k, [i]);
  }
  return out;
}

export interface AuditReport {
  overall: PrecisionEstimate;
  by_class: Array<PrecisionEstimate & { class_id: number }>;
}

/** The estimate reviewers may see: overall and per class, no source. */
export function auditEstimate(items: readonly AuditItemRecord[], alpha = 0.05): AuditReport {
  return {
    overall: precisionEstimate(items, alpha),
    by_class: [...groupBy(items, (i) => i.class_id)]
      .sort(([a], [b]) => a - b)
      .map(([class_id, mine]) => ({ class_id, ...precisionEstimate(mine, alpha) })),
  };
}

/** The score: the estimate plus precision per hidden source, which a scored audit reveals. */
export function auditScore(
  items: readonly AuditItemRecord[],
  alpha = 0.05,
): AuditReport & { by_source: Array<PrecisionEstimate & { source: string }> } {
  return {
    ...auditEstimate(items, alpha),
    by_source: [...groupBy(items, (i) => i.source)]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([source, mine]) => ({ source, ...precisionEstimate(mine, alpha) })),
  };
}

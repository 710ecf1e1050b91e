import { roundUsd } from '../govern/cost';

/**
 * Spend records read as money spent (docs/billing.md). A subject (a training job, a cloud session,
 * a corpus run) may carry an estimate, written when the cost gate let it start, and an actual,
 * written when it ended: the actual wins. An estimate made for a whole (a training sweep) gives
 * way once any of its parts (the sweep's jobs, `parent_id`) has an actual, so nothing counts twice.
 */

export const SPEND_KINDS = ['training', 'cloud', 'corpus_run', 'autolabel', 'labelling'] as const;
export type SpendKind = (typeof SPEND_KINDS)[number];

export const PERIODS = ['day', 'week', 'month'] as const;
export type Period = (typeof PERIODS)[number];

export interface SpendRow {
  id: string;
  kind: string;
  subject_type: string;
  subject_id: string;
  basis: 'estimate' | 'actual';
  gpu_hours: number;
  hourly_usd: number;
  usd: number;
  /** When the money counts: the work's end for an actual, the record's creation for an estimate. */
  at: Date;
  parent_id: string | null;
}

export function effectiveSpend(rows: readonly SpendRow[]): SpendRow[] {
  const actualOf = new Set<string>();
  const partsDone = new Set<string>();
  for (const r of rows)
    if (r.basis === 'actual') {
      actualOf.add(`${r.kind}/${r.subject_id}`);
      if (r.parent_id) partsDone.add(r.parent_id);
    }
  return rows.filter(
    (r) =>
      r.basis === 'actual' || (!actualOf.has(`${r.kind}/${r.subject_id}`) && !partsDone.has(r.subject_id)),
  );
}

/** The UTC start of the period holding `at`; weeks start on Monday (ISO 8601). */
export function periodStart(at: Date, period: Period): Date {
  const d = new Date(
    Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), period === 'month' ? 1 : at.getUTCDate()),
  );
  if (period === 'week') d.setUTCDate(d.getUTCDate() - ((d.getUTCDay() + 6) % 7));
  return d;
}

/** The start of the period after the one starting at `start`. */
export function nextPeriod(start: Date, period: Period): Date {
  const d = new Date(start);
  if (period === 'day') d.setUTCDate(d.getUTCDate() + 1);
  else if (period === 'week') d.setUTCDate(d.getUTCDate() + 7);
  else d.setUTCMonth(d.getUTCMonth() + 1);
  return d;
}

export interface SpendTotals {
  usd: number;
  gpu_hours: number;
  records: number;
  by_kind: Record<string, { usd: number; gpu_hours: number; records: number }>;
}

export function totalsOf(rows: readonly SpendRow[]): SpendTotals {
  const by_kind: SpendTotals['by_kind'] = {};
  for (const r of rows) {
    const k = (by_kind[r.kind] ??= { usd: 0, gpu_hours: 0, records: 0 });
    k.usd = roundUsd(k.usd + r.usd);
    k.gpu_hours = roundUsd(k.gpu_hours + r.gpu_hours);
    k.records += 1;
  }
  return {
    usd: roundUsd(rows.reduce((s, r) => s + r.usd, 0)),
    gpu_hours: roundUsd(rows.reduce((s, r) => s + r.gpu_hours, 0)),
    records: rows.length,
    by_kind,
  };
}

/** Effective spend per period from `from` (inclusive) to `to` (exclusive), every period listed, empty ones too. */
export function usageByPeriod(
  rows: readonly SpendRow[],
  period: Period,
  from: Date,
  to: Date,
): Array<{ period_start: string; period_end: string } & SpendTotals> {
  const counted = effectiveSpend(rows).filter((r) => r.at >= from && r.at < to);
  const out = [];
  for (let start = periodStart(from, period); start < to; start = nextPeriod(start, period)) {
    const end = nextPeriod(start, period);
    out.push({
      period_start: start.toISOString(),
      period_end: end.toISOString(),
      ...totalsOf(counted.filter((r) => r.at >= start && r.at < end)),
    });
  }
  return out;
}

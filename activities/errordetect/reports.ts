import { laplacePrecision, MIN_CONTROL_SAMPLE } from '../../core/control';
import { ERROR_KINDS, type ErrorKind } from '../../core/errordetect';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { CANDIDATE_STATES, type CandidateState } from './candidates';
import { errorRunOut, findErrorRun } from './runs';

/**
 * What the verdicts say about the detector (docs/quality-errordetect.md): its precision, measured
 * like the control sample's (core/control: Laplace-smoothed, reported only from
 * MIN_CONTROL_SAMPLE verdicts up), and the counts of candidates per kind and state.
 */

type Cell = { errorRunId: string; kind: string; state: string; n: number };

async function cells(db: Db, where: Prisma.ErrorCandidateWhereInput): Promise<Cell[]> {
  const rows = await db.errorCandidate.groupBy({
    by: ['errorRunId', 'kind', 'state'],
    where,
    _count: { _all: true },
  });
  return rows.map((r) => ({ errorRunId: r.errorRunId, kind: r.kind, state: r.state, n: r._count._all }));
}

export interface DetectorPrecision {
  status: 'measured' | 'not_yet_measurable';
  /** Candidates with a verdict: confirmed + dismissed. */
  reviewed: number;
  confirmed: number;
  dismissed: number;
  /** Candidates still open. */
  pending: number;
  /** (confirmed + 1) / (reviewed + 2); null while not measurable. */
  precision: number | null;
  reason: string | null;
}

/** One figure from verdict counts: core/control's rule, in the words of error candidates. */
export function precisionFigure(confirmed: number, dismissed: number, pending: number): DetectorPrecision {
  const reviewed = confirmed + dismissed;
  if (reviewed < MIN_CONTROL_SAMPLE) {
    const waiting = pending ? `; ${pending} candidate${pending === 1 ? ' awaits' : 's await'} a verdict` : '';
    return {
      status: 'not_yet_measurable',
      reviewed,
      confirmed,
      dismissed,
      pending,
      precision: null,
      reason: `not yet measurable: ${reviewed} of the ${MIN_CONTROL_SAMPLE} verdicts needed${waiting}`,
    };
  }
  return {
    status: 'measured',
    reviewed,
    confirmed,
    dismissed,
    pending,
    precision: laplacePrecision(confirmed, reviewed),
    reason: null,
  };
}

function figureOf(cs: readonly Cell[]): DetectorPrecision {
  const n = (state: CandidateState) => cs.filter((c) => c.state === state).reduce((s, c) => s + c.n, 0);
  return precisionFigure(n('confirmed'), n('dismissed'), n('open'));
}

const byKindOf = (cs: readonly Cell[]) =>
  Object.fromEntries(ERROR_KINDS.map((k) => [k, figureOf(cs.filter((c) => c.kind === k))])) as Record<
    ErrorKind,
    DetectorPrecision
  >;

/**
 * The detector's precision from the verdicts: overall and per kind, of every run or of one
 * (`error_run_id`), and per error run when `by_run` (newest first, at most `runs` of them).
 */
export async function detectorPrecision(
  db: Db,
  query: { error_run_id?: string | undefined; by_run: boolean; runs: number },
) {
  if (query.error_run_id) await findErrorRun(db, query.error_run_id);
  const all = await cells(db, query.error_run_id ? { errorRunId: query.error_run_id } : {});
  const out = {
    min_sample: MIN_CONTROL_SAMPLE,
    error_run_id: query.error_run_id ?? null,
    ...figureOf(all),
    by_kind: byKindOf(all),
  };
  if (!query.by_run) return out;
  const runs = await db.errorRun.findMany({
    where: query.error_run_id ? { id: query.error_run_id } : {},
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: query.runs,
    select: { id: true, status: true, createdAt: true },
  });
  return {
    ...out,
    by_run: runs.map((r) => {
      const mine = all.filter((c) => c.errorRunId === r.id);
      return {
        error_run_id: r.id,
        run_status: r.status,
        created_at: r.createdAt.toISOString(),
        ...figureOf(mine),
        by_kind: byKindOf(mine),
      };
    }),
  };
}

type Counts = Record<ErrorKind, Record<CandidateState | 'total', number>> & {
  total: Record<CandidateState | 'total', number>;
};

function countsOf(cs: readonly Cell[]): Counts {
  const zero = () =>
    Object.fromEntries([...CANDIDATE_STATES, 'total'].map((s) => [s, 0])) as Record<
      CandidateState | 'total',
      number
    >;
  const out = { total: zero() } as Counts;
  for (const k of ERROR_KINDS) out[k] = zero();
  for (const c of cs) {
    const kind = out[c.kind as ErrorKind];
    const state = c.state as CandidateState;
    if (!kind || !(state in kind)) continue;
    kind[state] += c.n;
    kind.total += c.n;
    out.total[state] += c.n;
    out.total.total += c.n;
  }
  return out;
}

/**
 * Counts of candidates per kind × state: overall, and per error run (newest first, at most `runs`),
 * with the class thresholds of the latest completed run (or of the one asked for).
 */
export async function errorDetectSummary(db: Db, query: { error_run_id?: string | undefined; runs: number }) {
  if (query.error_run_id) await findErrorRun(db, query.error_run_id);
  const all = await cells(db, query.error_run_id ? { errorRunId: query.error_run_id } : {});
  const [runs, totalRuns, latest] = await Promise.all([
    db.errorRun.findMany({
      where: query.error_run_id ? { id: query.error_run_id } : {},
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: query.runs,
    }),
    db.errorRun.count({ where: query.error_run_id ? { id: query.error_run_id } : {} }),
    db.errorRun.findFirst({
      where: { status: 'completed', ...(query.error_run_id ? { id: query.error_run_id } : {}) },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    }),
  ]);
  const summaryOf = (s: unknown) => (s && typeof s === 'object' ? (s as Record<string, unknown>) : {});
  return {
    error_run_id: query.error_run_id ?? null,
    runs_total: totalRuns,
    counts: countsOf(all),
    latest: latest
      ? {
          error_run_id: latest.id,
          run_id: latest.runId,
          model_version: summaryOf(latest.summary).model_version ?? null,
          finished_at: latest.finishedAt?.toISOString() ?? null,
          class_thresholds: summaryOf(latest.summary).class_thresholds ?? [],
        }
      : null,
    runs: runs.map((r) => {
      const { summary, ...rest } = errorRunOut(r);
      const s = summaryOf(summary);
      return {
        ...rest,
        model_version: s.model_version ?? null,
        frames: s.frames ?? null,
        labels: s.labels ?? null,
        counts: countsOf(all.filter((c) => c.errorRunId === r.id)),
      };
    }),
  };
}

import { jobOut as autolabelJobOut } from '../autolabel/jobs';
import { FORGE_KINDS, forgeWorkflowId, type ForgeKind } from '../edgeforge/runs';
import { flywheelRunLocation } from '../flywheel/runs';
import { jobOut as ingestJobOut } from '../ingest/progress';
import { progressOf, uniformState, type JobKind, type JobState } from '../../core/jobs/kinds';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';

/** Rows are read inside the cancel's transaction as well as outside. */
type Reader = Db | Prisma.TransactionClient;

/** A job of any kind, as GET /api/jobs lists it (docs/jobs.md). */
export interface JobItem {
  kind: JobKind;
  job_id: string;
  state: JobState;
  /** The state in the kind's own words (`succeeded`, `queued-cloud`, `detecting` …). */
  raw_state: string;
  /** 0..1 where the table knows how much there is; null where it does not. */
  progress: number | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  workflow_id: string | null;
  error: string | null;
  created_by: string | null;
  /** The kind's own route for this job. */
  link: string;
}

/**
 * Where a kind's jobs live: its table, the SQL expression of its own state, which rows are jobs,
 * how a cancel is written, and how its rows read as items.
 */
export interface JobSource {
  table: string;
  state: Prisma.Sql;
  /** Rows of the table that are not jobs (imported inference runs, gate verdicts) are left out. */
  where?: Prisma.Sql;
  /** The SET clause that ends a job as cancelled, keeping everything it had done. */
  cancelled: Prisma.Sql;
  read(db: Reader, ids: string[]): Promise<JobItem[]>;
}

/** One row of a kind, in the fields every kind shows. */
interface RowView {
  id: string;
  raw: string;
  createdAt: Date;
  startedAt: Date | string | null;
  finishedAt: Date | string | null;
  error: string | null;
  createdBy: string | null;
  workflowId: string | null;
  link: string;
  /** Work done and its total, where the table counts it; or the kind's own progress figure. */
  done?: number | null | undefined;
  total?: number | null | undefined;
  share?: number;
}

const iso = (d: Date | string | null) => (d instanceof Date ? d.toISOString() : d);

function itemOf(kind: JobKind, v: RowView): JobItem {
  const state = uniformState(kind, v.raw);
  return {
    kind,
    job_id: v.id,
    state,
    raw_state: v.raw,
    progress: state === 'completed' ? 1 : (v.share ?? progressOf(state, v.done, v.total)),
    created_at: v.createdAt.toISOString(),
    started_at: iso(v.startedAt),
    finished_at: iso(v.finishedAt),
    workflow_id: v.workflowId,
    error: v.error,
    created_by: v.createdBy,
    link: v.link,
  };
}

/** A kind whose table has a state column, `error` and `finished_at`, unless it says otherwise. */
function source<R>(
  kind: JobKind,
  s: {
    table: string;
    stateColumn?: string;
    state?: Prisma.Sql;
    where?: Prisma.Sql;
    cancelled?: Prisma.Sql;
    rows: (db: Reader, ids: string[]) => Promise<R[]>;
    view: (row: R) => RowView;
  },
): JobSource {
  const column = s.stateColumn ?? 'status';
  return {
    table: s.table,
    state: s.state ?? Prisma.raw(column),
    ...(s.where ? { where: s.where } : {}),
    // The reason reads as the training cancel writes it; the end time is kept when the job's own failure report set it.
    cancelled:
      s.cancelled ??
      Prisma.sql`${Prisma.raw(column)} = 'cancelled', error = 'cancelled', finished_at = COALESCE(finished_at, now())`,
    read: async (db, ids) => (await s.rows(db, ids)).map((row) => itemOf(kind, s.view(row))),
  };
}

const byIds = (ids: string[]) => ({ where: { id: { in: ids } } });

export const JOB_SOURCES: Record<JobKind, JobSource> = {
  ingest: source('ingest', {
    table: 'ingest_jobs',
    stateColumn: 'state',
    rows: (db, ids) => db.ingestJob.findMany(byIds(ids)),
    view: (j) => ({
      ...j,
      raw: j.state,
      startedAt: null,
      share: ingestJobOut(j).progress,
      link: `/api/imports/${j.id}`,
    }),
  }),
  autolabel: source('autolabel', {
    table: 'autolabel_jobs',
    stateColumn: 'state',
    rows: (db, ids) => db.autolabelJob.findMany(byIds(ids)),
    view: (j) => ({
      ...j,
      raw: j.state,
      share: autolabelJobOut(j).progress,
      link: `/api/autolabel/${j.id}`,
    }),
  }),
  export: source('export', {
    table: 'export_jobs',
    stateColumn: 'state',
    rows: (db, ids) => db.exportJob.findMany(byIds(ids)),
    view: (j) => {
      const p = j.progress as { frames_done?: number; total_frames?: number };
      return {
        ...j,
        raw: j.state,
        startedAt: null,
        done: p.frames_done,
        total: p.total_frames,
        link: `/api/exports/${j.id}/progress`,
      };
    },
  }),
  training: source('training', {
    table: 'training_jobs',
    rows: (db, ids) => db.trainingJob.findMany(byIds(ids)),
    view: (j) => ({
      ...j,
      raw: j.status,
      done: (j.progress as { epoch?: number }).epoch,
      total: (j.config as { epochs?: number }).epochs,
      link: `/api/training/${j.id}`,
    }),
  }),
  corpus: source('corpus', {
    table: 'agent_runs',
    rows: (db, ids) => db.agentRun.findMany(byIds(ids)),
    view: (r) => ({ ...r, raw: r.status, startedAt: null, link: `/api/agent/runs/${r.id}` }),
  }),
  inference: source('inference', {
    table: 'inference_runs',
    // Imported and reconstructed runs are written whole by their request: no job ran.
    where: Prisma.sql`origin = 'gpu'`,
    rows: (db, ids) => db.inferenceRun.findMany(byIds(ids)),
    view: (r) => ({
      ...r,
      raw: r.status,
      done: r.framesDone,
      total: r.framesPlanned,
      link: `/api/eval/operations?subject_id=${r.id}`,
    }),
  }),
  errordetect: source('errordetect', {
    table: 'error_runs',
    rows: (db, ids) => db.errorRun.findMany(byIds(ids)),
    view: (r) => ({
      ...r,
      raw: r.status,
      startedAt: null,
      link: `/api/errordetect/summary?error_run_id=${r.id}`,
    }),
  }),
  // A forge run keeps its status, times and error in its result; gate verdicts share the table but are no jobs.
  edgeforge: source('edgeforge', {
    table: 'edge_forge_runs',
    state: Prisma.sql`result->>'status'`,
    where: Prisma.sql`kind IN (${Prisma.join([...FORGE_KINDS])})`,
    cancelled: Prisma.sql`result = result || jsonb_build_object('status', 'cancelled', 'error', 'cancelled', 'finished_at', to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`,
    rows: (db, ids) => db.edgeForgeRun.findMany(byIds(ids)),
    view: (r) => {
      const result = r.result as {
        status?: string;
        error?: string;
        started_at?: string;
        finished_at?: string;
      };
      return {
        id: r.id,
        raw: result.status ?? 'queued',
        createdAt: r.createdAt,
        startedAt: result.started_at ?? null,
        finishedAt: result.finished_at ?? null,
        error: result.error ?? null,
        createdBy: r.createdBy,
        workflowId: forgeWorkflowId(r.kind as ForgeKind, r),
        link: `/api/edgeforge/benchmarks?run_id=${r.id}`,
      };
    },
  }),
  campaign: source('campaign', {
    table: 'campaigns',
    cancelled: Prisma.sql`status = 'cancelled', stage = 'done', stop_reason = 'cancelled', error = 'cancelled', finished_at = COALESCE(finished_at, now())`,
    rows: (db, ids) => db.campaign.findMany(byIds(ids)),
    view: (c) => ({
      ...c,
      raw: c.status,
      startedAt: c.createdAt,
      done: c.labelsUsed,
      total: c.labelBudget,
      link: `/api/campaigns/${c.id}`,
    }),
  }),
  flywheel: source('flywheel', {
    table: 'flywheel_runs',
    rows: (db, ids) => db.flywheelRun.findMany(byIds(ids)),
    view: (r) => ({
      ...r,
      raw: r.status,
      startedAt: r.createdAt,
      done: (r.stages as Array<{ state: string }>).filter((s) => s.state === 'done' || s.state === 'skipped')
        .length,
      total: (r.stages as unknown[]).length,
      link: flywheelRunLocation(r.id),
    }),
  }),
};

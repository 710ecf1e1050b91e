import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError } from '../../core/errors';
import { TrainingConfigSchema, type TrainingConfig } from '../../core/training-jobs/config';
import {
  expandGrid,
  MAX_SWEEP_POINTS,
  rankSweep,
  sweepChildId,
  sweepValue,
  type Grid,
  type SweepMetric,
} from '../../core/training-jobs/sweep';
import type { Prisma, TrainingJob, TrainingSweep } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { trainingJobOut, trainingJobRow, trainingWorkflowId, type TrainingRequest } from './jobs';

/**
 * Hyperparameter sweeps (docs/training.md): a sweep row holds the grid and what every child
 * shares; the sweep workflow makes one local training job per grid point and runs them as child
 * workflows that queue for the GPU slot.
 */

export const sweepWorkflowId = (sweepId: string): string => `training-sweep-${sweepId}`;

/** What every child shares, as the sweep row stores it. */
export interface SweepBase {
  dataset_commit_id: string;
  parent_model_version: string;
  task: string;
  config: TrainingConfig;
}

export async function findSweep(db: Db, name: string): Promise<TrainingSweep> {
  const sweep = await db.trainingSweep.findUnique({ where: { name } });
  if (!sweep) throw new NotFoundError(`no training sweep ${name}`);
  return sweep;
}

/** The sweep row; a name in use is a conflict (names are how sweeps are read back). */
export async function createSweep(
  db: Db,
  input: { name: string; grid: Grid; base: SweepBase; metric: SweepMetric; actorId: string },
): Promise<TrainingSweep> {
  if (await db.trainingSweep.findUnique({ where: { name: input.name }, select: { id: true } }))
    throw new ConflictError(`a training sweep named ${input.name} exists`);
  const id = randomUUID();
  return db.trainingSweep.create({
    data: {
      id,
      name: input.name,
      grid: input.grid as Prisma.InputJsonValue,
      base: input.base as unknown as Prisma.InputJsonValue,
      metric: input.metric,
      workflowId: sweepWorkflowId(id),
      createdBy: input.actorId,
    },
  });
}

const pointLabel = (values: Partial<TrainingConfig>) =>
  Object.entries(values)
    .map(([k, v]) => `${k}=${Array.isArray(v) ? v.join('+') : String(v)}`)
    .join(' ');

/** The sweep's children in grid order (the order the sweep made them in). */
async function sweepChildren(db: Db, sweep: TrainingSweep): Promise<TrainingJob[]> {
  const order = new Map(Array.from({ length: MAX_SWEEP_POINTS }, (_, i) => [sweepChildId(sweep.id, i), i]));
  const jobs = await db.trainingJob.findMany({ where: { sweepName: sweep.name } });
  return jobs.sort((a, b) => (order.get(a.id) ?? MAX_SWEEP_POINTS) - (order.get(b.id) ?? MAX_SWEEP_POINTS));
}

/**
 * One queued local job per grid point, with ids derived from the sweep and the point, made in one
 * statement: a retried planning step makes none twice. Answers the children's ids in grid order.
 */
export async function planSweep(
  deps: Pick<ActivityDeps, 'db'>,
  input: { sweepId: string },
): Promise<Array<{ jobId: string; workflowId: string }>> {
  const { db } = deps;
  const sweep = await db.trainingSweep.findUniqueOrThrow({ where: { id: input.sweepId } });
  const base = sweep.base as unknown as SweepBase;
  const expanded = expandGrid(TrainingConfigSchema.parse(base.config), sweep.grid as Grid);
  if (!expanded.ok) throw new Error(`sweep ${sweep.name}: its stored grid no longer expands`);
  const rows = expanded.points.map((p, i) => {
    const req: TrainingRequest & { name: string; sweepName: string } = {
      dataset_commit_id: base.dataset_commit_id,
      parent_model_version: base.parent_model_version,
      task: base.task,
      trainer: 'head-finetune',
      compute_target: 'local',
      config: p.config,
      name: `${sweep.name} ${pointLabel(p.values)}`,
      sweepName: sweep.name,
    };
    return trainingJobRow(
      sweepChildId(sweep.id, i),
      req,
      { modelVersion: base.parent_model_version },
      { status: 'queued', cloudSessionId: null },
      sweep.createdBy,
    );
  });
  await db.trainingJob.createMany({ data: rows, skipDuplicates: true });
  return rows.map((r) => ({ jobId: r.id!, workflowId: trainingWorkflowId(r.id!) }));
}

/** The children ranked by the sweep's metric, best first; children without a value follow, unranked. */
export async function sweepRanking(db: Db, sweep: TrainingSweep) {
  const metric = sweep.metric as SweepMetric;
  const children = (await sweepChildren(db, sweep)).map((job) => ({
    jobId: job.id,
    status: job.status,
    value: sweepValue(metric, job),
    job,
  }));
  return rankSweep(children, metric).map(({ job, rank, value }) => ({
    rank,
    value,
    ...trainingJobOut(job),
  }));
}

/** Ends the sweep: completed when a child completed, else failed; answers the best child. */
export async function finishSweep(
  deps: Pick<ActivityDeps, 'db'>,
  input: { sweepId: string },
): Promise<{ status: string; bestJobId: string | null; bestValue: number | null }> {
  const { db } = deps;
  const sweep = await db.trainingSweep.findUniqueOrThrow({ where: { id: input.sweepId } });
  const ranking = await sweepRanking(db, sweep);
  const best = ranking[0]?.rank === 1 ? ranking[0] : null;
  const status = ranking.some((c) => c.status === 'completed') ? 'completed' : 'failed';
  await db.$transaction(async (tx) => {
    await tx.trainingSweep.update({ where: { id: sweep.id }, data: { status, finishedAt: new Date() } });
    await recordAudit(tx, {
      actorId: sweep.createdBy,
      action: `training.sweep.${status}`,
      subjectType: 'training_sweep',
      subjectId: sweep.id,
      detail: {
        name: sweep.name,
        best_job_id: best?.job_id ?? null,
        metric: sweep.metric,
        value: best?.value ?? null,
      },
    });
  });
  return { status, bestJobId: best?.job_id ?? null, bestValue: best?.value ?? null };
}

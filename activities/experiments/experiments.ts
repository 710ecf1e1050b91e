import { NotFoundError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import { deltas, numericLeaves, type CurveSummary } from '../../core/registry';
import type { Experiment, ExperimentRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { conflictOnDuplicate, latestEvaluations, trainingOf } from '../registry/models';

/**
 * Experiments (docs/experiments.md): named groups of training runs — each run a training job
 * attached with a label, notes and an optional baseline run — and runs compared side by side.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const experimentOut = (e: Experiment, runs: number) => ({
  id: e.id,
  name: e.name,
  description: e.description,
  runs,
  created_by: e.createdBy,
  created_at: e.createdAt.toISOString(),
});

const runOut = (r: ExperimentRun) => ({
  run_id: r.id,
  job_id: r.jobId,
  baseline_run_id: r.baselineRunId,
  label: r.label,
  notes: r.notes,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
});

export async function createExperiment(
  db: Db,
  input: { name: string; description?: string | null | undefined },
  actor: Actor,
) {
  const experiment = await db.experiment
    .create({ data: { name: input.name, description: input.description ?? null, createdBy: actor.userId } })
    .catch(conflictOnDuplicate(`an experiment named ${input.name} exists`));
  return experimentOut(experiment, 0);
}

export async function listExperiments(db: Db, query: { limit: number; cursor?: string | undefined }) {
  if (
    query.cursor &&
    !(await db.experiment.findUnique({ where: { id: query.cursor }, select: { id: true } }))
  )
    throw new NotFoundError(`cursor ${query.cursor} names no experiment`);
  const rows = await db.experiment.findMany({
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    include: { _count: { select: { runs: true } } },
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map((e) => experimentOut(e, e._count.runs)), next_cursor };
}

async function findExperiment(db: Db, name: string) {
  const experiment = await db.experiment.findUnique({ where: { name } });
  if (!experiment) throw new NotFoundError(`no experiment ${name}`);
  return experiment;
}

/** An experiment with its runs, oldest first, each with the training job it attaches. */
export async function getExperiment(db: Db, name: string) {
  const experiment = await findExperiment(db, name);
  const runs = await db.experimentRun.findMany({
    where: { experimentId: experiment.id },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const jobs = await trainingOf(
    db,
    runs.map((r) => r.jobId),
  );
  return {
    ...experimentOut(experiment, runs.length),
    runs: runs.map((r) => ({ ...runOut(r), job: jobs.get(r.jobId) ?? null })),
  };
}

/**
 * Attaches a training job as a run (AttachIn): the job must exist (404), its baseline must be a run
 * of this experiment (404), and a job is attached to an experiment once (409).
 */
export async function attachRun(
  db: Db,
  name: string,
  input: { job_id: string; baseline_run_id?: string | null; label?: string | null; notes?: string | null },
  actor: Actor,
) {
  const experiment = await findExperiment(db, name);
  const job = UUID.test(input.job_id)
    ? await db.trainingJob.findUnique({ where: { id: input.job_id }, select: { id: true } })
    : null;
  if (!job) throw new NotFoundError(`no training job ${input.job_id}`);
  if (input.baseline_run_id) {
    const baseline = UUID.test(input.baseline_run_id)
      ? await db.experimentRun.findUnique({ where: { id: input.baseline_run_id } })
      : null;
    if (baseline?.experimentId !== experiment.id)
      throw new NotFoundError(`experiment ${name} has no run ${input.baseline_run_id} (baseline_run_id)`);
  }
  const run = await db.$transaction(async (tx) => {
    const created = await tx.experimentRun
      .create({
        data: {
          experimentId: experiment.id,
          jobId: job.id,
          baselineRunId: input.baseline_run_id ?? null,
          label: input.label ?? null,
          notes: input.notes ?? null,
          createdBy: actor.userId,
        },
      })
      .catch(conflictOnDuplicate(`training job ${job.id} is already a run of experiment ${name}`));
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'experiment.attach',
      subjectType: 'experiment',
      subjectId: experiment.id,
      detail: { run_id: created.id, job_id: job.id },
      requestId: actor.requestId,
    });
    return created;
  });
  return { experiment: experiment.name, ...runOut(run) };
}

/** Most runs compared side by side. */
export const COMPARE_MAX_RUNS = 10;

/** The per-class validation AP50 a trainer reported for the model it trained (docs/training.md). */
function validationAp(metrics: unknown): Record<string, number> {
  const trained = (metrics as { trained?: { ap50_by_class?: unknown } } | null)?.trained;
  return numericLeaves(trained?.ap50_by_class ?? {}, '', 1);
}

const curveFigures = (c: CurveSummary) =>
  Object.fromEntries(
    [
      ['last_train_loss', c.last_train_loss],
      ['min_val_loss', c.min_val_loss],
      ['last_val_loss', c.last_val_loss],
      ...Object.entries(c.metrics).flatMap(([k, m]) => [
        [`${k}.best`, m.best],
        [`${k}.last`, m.last],
      ]),
    ].filter((e): e is [string, number] => typeof e[1] === 'number'),
  );

/**
 * Runs side by side: each run's training configuration, metrics, validation AP per class, curve
 * summary and latest evaluations on gold, with deltas against the first run named (the baseline):
 * numbers are compared key by key wherever both runs have the key, and on gold only where both
 * models were evaluated on the same gold set.
 */
export async function compareRuns(db: Db, runIds: readonly string[]) {
  const runs = await db.experimentRun.findMany({
    where: { id: { in: [...runIds] } },
    include: { experiment: { select: { name: true } } },
  });
  const missing = runIds.filter((id) => !runs.some((r) => r.id === id));
  if (missing.length) throw new NotFoundError(`no experiment run ${missing.join(', ')}`);
  const ordered = runIds.map((id) => runs.find((r) => r.id === id)!);
  const jobs = await trainingOf(
    db,
    ordered.map((r) => r.jobId),
  );
  const versions = [...jobs.values()].flatMap((j) => (j.model_version ? [j.model_version] : []));
  const evaluations = await latestEvaluations(db, versions);
  const sides = ordered.map((r) => {
    const job = jobs.get(r.jobId) ?? null;
    const gold = job?.model_version ? (evaluations.get(job.model_version) ?? []) : [];
    return {
      run: r,
      job,
      config: numericLeaves(job?.config ?? {}),
      metrics: numericLeaves(job?.metrics ?? {}),
      per_class_ap: validationAp(job?.metrics),
      curve: job ? curveFigures(job.curve) : {},
      gold: Object.fromEntries(gold.map((e) => [e.gold_id, e])),
    };
  });
  const base = sides[0]!;
  const goldDeltas = (other: (typeof sides)[number]) =>
    Object.fromEntries(
      Object.entries(other.gold).flatMap(([goldId, e]) => {
        const b = base.gold[goldId];
        if (!b) return [];
        return [[goldId, deltas(numericLeaves(b, '', 1), numericLeaves(e, '', 1))]];
      }),
    );
  return {
    baseline_run_id: base.run.id,
    runs: sides.map((s, i) => ({
      ...runOut(s.run),
      experiment: s.run.experiment.name,
      job: s.job,
      per_class_ap: s.per_class_ap,
      evaluations: Object.values(s.gold),
      deltas:
        i === 0
          ? null
          : {
              config: deltas(base.config, s.config),
              metrics: deltas(base.metrics, s.metrics),
              per_class_ap: deltas(base.per_class_ap, s.per_class_ap),
              curve: deltas(base.curve, s.curve),
              gold: goldDeltas(s),
            },
    })),
  };
}

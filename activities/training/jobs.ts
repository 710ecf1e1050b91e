import { randomUUID } from 'node:crypto';
import type { AppConfig } from '../../core/config';
import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import {
  isFinished,
  taskRefusal,
  trainedModelVersion,
  type ComputeTarget,
  type Trainer,
  type TrainingConfig,
} from '../../core/training-jobs/config';
import type { Model, Prisma, TrainingJob } from '../../generated/prisma/client';
import type { EventHub } from '../../runtime/event-hub';
import { recordAudit } from '../audit';
import { placeTrainingJob } from '../cloud/placement';
import { emitJobEvent } from '../events/jobs';
import { findCommit } from '../datasets/read';
import { assertConsentAllows } from '../govern/consent';
import { assertWorkMayStart } from '../govern/start-guard';
import { recordActualSpend } from '../govern/spend';
import type { Db } from '../db';
import { currentChampion, findModel, type ArtifactDeps } from '../models/artifacts';
import { checkTrainableCommit } from './dataset';

/** Training jobs (docs/training.md): the rows, their checks, their outcome. */

export const trainingWorkflowId = (jobId: string): string => `training-${jobId}`;

export const trainingJobOut = (j: TrainingJob) => ({
  job_id: j.id,
  name: j.name,
  status: j.status,
  task: j.task,
  trainer: j.trainer,
  compute_target: j.computeTarget,
  dataset_commit_id: j.datasetCommitId,
  parent_model_version: j.parentVersion,
  config: j.config,
  sweep_name: j.sweepName,
  workflow_id: j.workflowId,
  model_version: j.modelVersion,
  progress: j.progress,
  metrics: j.metrics,
  checkpoint: j.checkpoint,
  error: j.error,
  created_at: j.createdAt.toISOString(),
  started_at: j.startedAt?.toISOString() ?? null,
  finished_at: j.finishedAt?.toISOString() ?? null,
  curve: `/api/training/runs/${j.id}/curve`,
  events: `/api/events/training/${j.id}`,
});

export async function findTrainingJob(db: Db, id: string): Promise<TrainingJob> {
  const job = await db.trainingJob.findUnique({ where: { id } });
  if (!job) throw new NotFoundError(`no training job ${id}`);
  return job;
}

export interface TrainingRequest {
  dataset_commit_id: string;
  parent_model_version?: string | null | undefined;
  task: string;
  trainer: Trainer;
  compute_target: ComputeTarget;
  config: TrainingConfig;
}

/**
 * Refuses, by name, what cannot be trained, before a job exists: a task other than 2D detection
 * (3D named), an external trainer that is not configured, more epochs than allowed, an unknown
 * commit or parent (404), a commit without COCO train/val splits or images, a parent whose
 * outputs are not the closed-set detector's. Answers the commit and the parent (the champion when
 * none is named).
 */
export async function checkTrainingRequest(
  deps: ArtifactDeps,
  req: TrainingRequest,
): Promise<{ parent: Model }> {
  await assertWorkMayStart(deps.db, 'training');
  const refused = taskRefusal(req.task);
  if (refused) throw new RefusedError(refused, { reason: 'task' });
  const t = deps.config.training;
  if (req.trainer === 'external' && !t.externalCommand && !t.externalEndpoint)
    throw new RefusedError(
      'the external trainer is not configured: set APP_TRAINING__EXTERNAL_COMMAND (a command reading the job on stdin) or APP_TRAINING__EXTERNAL_ENDPOINT (an HTTP endpoint), docs/training.md',
      { reason: 'external_not_configured' },
    );
  if (req.config.epochs > t.maxEpochs)
    throw new InputError(`at most ${t.maxEpochs} epochs (APP_TRAINING__MAX_EPOCHS)`, [
      { field: 'body.config.epochs', message: `at most ${t.maxEpochs}` },
    ]);
  const commit = await findCommit(deps.db, req.dataset_commit_id);
  await assertConsentAllows(deps.db, deps.config.consent, 'training', commit.sessionIds);
  checkTrainableCommit(commit);
  const parent = req.parent_model_version
    ? await findModel(deps.db, req.parent_model_version)
    : await currentChampion(deps, req.task);
  if (parent.task !== req.task)
    throw new RefusedError(`parent ${parent.modelVersion} is a ${parent.task} model, not ${req.task}`);
  if (parent.format !== 'yolox')
    throw new RefusedError(
      `parent ${parent.modelVersion} has format ${parent.format ?? 'unknown'}: the trainers fine-tune yolox-family detectors (COCO-80 outputs) only`,
    );
  if (parent.origin !== 'builtin' && !parent.artifactUri)
    throw new RefusedError(
      `parent ${parent.modelVersion} has no model file here (its predictions are imported)`,
    );
  if (parent.state === 'retired')
    throw new RefusedError(
      `parent ${parent.modelVersion} is retired; train from a candidate or the champion`,
    );
  return { parent };
}

export type NewTrainingJob = TrainingRequest & { name?: string | null | undefined; sweepName?: string };

/** The row of a new job `id`, with the status its placement gave it (`queued` or `queued-cloud`). */
export const trainingJobRow = (
  id: string,
  req: NewTrainingJob,
  parent: Pick<Model, 'modelVersion'>,
  placed: { status: string; cloudSessionId: string | null },
  actorId: string | null,
): Prisma.TrainingJobCreateManyInput => ({
  id,
  name: req.name ?? null,
  status: placed.status,
  task: req.task,
  trainer: req.trainer,
  computeTarget: req.compute_target,
  datasetCommitId: req.dataset_commit_id,
  parentVersion: parent.modelVersion,
  config: req.config,
  sweepName: req.sweepName ?? null,
  workflowId: trainingWorkflowId(id),
  progress: placed.cloudSessionId ? { cloud_session_id: placed.cloudSessionId } : {},
  createdBy: actorId,
});

/** A job row for `training-<job_id>`, queued for the local slot or parked for the cloud. */
export async function createTrainingJob(
  deps: { db: Db; config: AppConfig },
  req: NewTrainingJob,
  parent: Model,
  actorId: string | null,
): Promise<TrainingJob> {
  const placed = await placeTrainingJob(deps, req.compute_target);
  return deps.db.trainingJob.create({ data: trainingJobRow(randomUUID(), req, parent, placed, actorId) });
}

type Events = Pick<EventHub, 'publish'>;

/** `training.status` on the training stream: every change of a job's status. */
export const publishStatus = (events: Events, job: TrainingJob) =>
  events.publish('training', 'training.status', {
    job_id: job.id,
    status: job.status,
    model_version: job.modelVersion,
    error: job.error,
  });

/**
 * Ends a job that did not complete (`failed` with the reason, or `cancelled`), unless it already
 * ended: a cancel that races the job's completion leaves it completed.
 */
export async function settleTrainingJob(
  deps: { db: Db; events: Events },
  input: { jobId: string; status: 'failed' | 'cancelled'; error: string },
): Promise<TrainingJob> {
  const { db } = deps;
  const job = await findTrainingJob(db, input.jobId);
  if (isFinished(job.status)) return job;
  const ended = await db.$transaction(async (tx) => {
    const row = await tx.trainingJob.update({
      where: { id: job.id },
      data: { status: input.status, error: input.error, finishedAt: new Date() },
    });
    await recordActualSpend(tx, 'training', job.id);
    await recordAudit(tx, {
      actorId: null,
      action: `training.${input.status}`,
      subjectType: 'training_job',
      subjectId: job.id,
      detail: { error: input.error },
    });
    await emitJobEvent(
      tx,
      { kind: 'training', id: job.id, startedBy: job.createdBy },
      input.status === 'failed'
        ? { kind: 'job.failed', reason: input.error }
        : { kind: 'job.cancelled', by: null },
    );
    return row;
  });
  await publishStatus(deps.events, ended);
  return ended;
}

export interface TrainedArtifact {
  key: string;
  sha256: string;
  sizeBytes: number;
}

/**
 * Registers what a job trained as a `candidate` model (origin `trained`, lineage: parent, dataset
 * commit, job) and completes the job, in one transaction. A retried attempt registers the same
 * version again, not a second one. A file identical to its parent's is refused: training that
 * changed no weight produced no new model.
 */
export async function registerTrainedModel(
  deps: { db: Db; events: Events },
  input: { jobId: string; artifact: TrainedArtifact; metrics: Record<string, unknown> },
): Promise<TrainingJob> {
  const { db } = deps;
  const job = await findTrainingJob(db, input.jobId);
  const parent = await findModel(db, job.parentVersion);
  if (parent.sha256 && parent.sha256 === input.artifact.sha256)
    throw new RefusedError(
      `training job ${job.id} produced a file identical to its parent ${parent.modelVersion}: no weight changed`,
    );
  const modelVersion = trainedModelVersion(job.id);
  // What the job recorded before (the dataset summary) stays beside what training measured.
  const metrics = { ...(job.metrics as object), ...input.metrics } as Prisma.InputJsonValue;
  const row = {
    name: job.name ?? `${job.trainer} of ${parent.modelVersion}`,
    origin: 'trained',
    task: job.task,
    classIds: parent.classIds,
    artifactUri: input.artifact.key,
    state: 'candidate',
    parentVersion: parent.modelVersion,
    datasetCommitId: job.datasetCommitId,
    trainingJobId: job.id,
    sha256: input.artifact.sha256,
    sizeBytes: input.artifact.sizeBytes,
    format: parent.format,
    trainingConfig: { trainer: job.trainer, compute_target: job.computeTarget, ...(job.config as object) },
    metrics,
    createdBy: job.createdBy,
  };
  const done = await db.$transaction(async (tx) => {
    await tx.model.upsert({ where: { modelVersion }, create: { modelVersion, ...row }, update: row });
    const completed = await tx.trainingJob.update({
      where: { id: job.id },
      data: { status: 'completed', modelVersion, metrics, error: null, finishedAt: new Date() },
    });
    await recordActualSpend(tx, 'training', job.id);
    await recordAudit(tx, {
      actorId: job.createdBy,
      action: 'training.completed',
      subjectType: 'training_job',
      subjectId: job.id,
      detail: { model_version: modelVersion, sha256: input.artifact.sha256 },
    });
    await emitJobEvent(
      tx,
      { kind: 'training', id: job.id, startedBy: job.createdBy },
      { kind: 'job.completed', summary: { model_version: modelVersion } },
    );
    return completed;
  });
  await publishStatus(deps.events, done);
  return done;
}

/** Training jobs waiting for the local GPU slot, oldest first, as the slot's queue lists them. */
export async function trainingSlotQueue(db: Db) {
  const queued = await db.trainingJob.findMany({
    where: { status: 'queued', computeTarget: 'local' },
    orderBy: { createdAt: 'asc' },
    take: 200,
  });
  return queued.map((j) => ({
    kind: 'training' as const,
    job_id: j.id,
    session_id: null,
    workflow_id: j.workflowId,
    name: j.name,
    queued_at: j.createdAt.toISOString(),
  }));
}

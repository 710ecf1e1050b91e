import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { ApplicationFailure, CancelledFailure, Context } from '@temporalio/activity';
import { DomainError } from '../../core/errors';
import { isFinished, trainedModelVersion, type TrainingConfig } from '../../core/training-jobs/config';
import { bestEpoch, pace, type TrainingProgress } from '../../core/training-jobs/curve';
import type { Prisma, TrainingJob } from '../../generated/prisma/client';
import type { CloudTrainingResult } from '../cloud';
import { releaseSlot, takeSlot } from '../autolabel/slot';
import { findCommit } from '../datasets/read';
import { assertConsentAllows } from '../govern/consent';
import type { ActivityDeps } from '../deps';
import { readObject } from '../inspector/frame-objects';
import { findModel, readModelArtifact, storeModelArtifact } from '../models/artifacts';
import { planTrainingData } from './dataset';
import { ExternalTrainerError } from './external';
import { findTrainingJob, publishStatus, registerTrainedModel, settleTrainingJob } from './jobs';
import { planSweep, finishSweep } from './sweeps';
import { runBuiltinTrainer, runExternalTrainer, type EpochRecord, type TrainerInput } from './trainers';

export interface TrainModelInput {
  jobId: string;
}

export interface TrainingOutcome {
  jobId: string;
  status: string;
  modelVersion: string | null;
  /** The epoch the last attempt resumed after (0: it trained from the parent). */
  resumedFrom: number;
}

/** What the heartbeat carries: the last epoch whose checkpoint is stored, and where. */
export interface TrainingHeartbeat {
  epoch: number;
  checkpointKey: string | null;
}

/** The checkpoint file: the trainer's state after `epoch`. */
interface StoredCheckpoint {
  epoch: number;
  trainer: string;
  state: unknown;
}

const checkpointKey = (jobId: string): string => `training/${jobId}/checkpoint.json`;

/**
 * Domain refusals (commit, parent, trainer) and broken trainer contracts fail the job at once; the
 * workflow lists these types as non-retryable.
 */
function asFailure(err: unknown): unknown {
  if (err instanceof DomainError) return ApplicationFailure.nonRetryable(err.message, 'TrainingRefused');
  if (err instanceof ExternalTrainerError)
    return ApplicationFailure.nonRetryable(err.message, 'ExternalTrainerFailed');
  return err;
}

const outcome = (job: TrainingJob, resumedFrom: number): TrainingOutcome => ({
  jobId: job.id,
  status: job.status,
  modelVersion: job.modelVersion,
  resumedFrom,
});

/** Training bookkeeping activities of the `cpu` queue. */
export function createTrainingActivities(deps: ActivityDeps) {
  const { db, storage } = deps;
  return {
    /**
     * Checks the job's dataset commit and parent before it queues for the slot (a dataset that
     * cannot train should not wait for the GPU to say so) and records what training will see of
     * the commit: images and boxes per split, the classes left out and why.
     */
    async prepareTrainingJob(input: { jobId: string }): Promise<void> {
      try {
        const job = await findTrainingJob(db, input.jobId);
        const commit = await findCommit(db, job.datasetCommitId);
        // Consent may have been withdrawn since the job was started.
        await assertConsentAllows(db, deps.config.consent, 'training', commit.sessionIds);
        const [data] = await Promise.all([
          planTrainingData(storage, commit),
          findModel(db, job.parentVersion),
        ]);
        await db.trainingJob.update({
          where: { id: job.id },
          data: { metrics: { dataset: data.summary } as unknown as Prisma.InputJsonValue },
        });
      } catch (err) {
        throw asFailure(err);
      }
    },
    /** Ends a job that failed or was cancelled, with the reason. */
    async settleTrainingJob(input: {
      jobId: string;
      status: 'failed' | 'cancelled';
      error: string;
    }): Promise<void> {
      await settleTrainingJob(deps, input);
    },
    /** Registers the file a cloud training run stored, like a local job's. */
    async registerCloudModel(input: {
      jobId: string;
      result: CloudTrainingResult;
    }): Promise<TrainingOutcome> {
      try {
        const job = await registerTrainedModel(deps, {
          jobId: input.jobId,
          artifact: {
            key: input.result.modelKey,
            sha256: input.result.sha256,
            sizeBytes: input.result.sizeBytes,
          },
          metrics: input.result.metrics,
        });
        return outcome(job, 0);
      } catch (err) {
        throw asFailure(err);
      }
    },
    planSweep: (input: { sweepId: string }) => planSweep(deps, input),
    finishSweep: (input: { sweepId: string }) => finishSweep(deps, input),
  };
}

/**
 * What happens after every epoch, in an order that makes a resume safe: the curve point first (an
 * epoch persisted without its checkpoint is trained again on resume and upserted, never doubled),
 * then the checkpoint file, then the job's progress and checkpoint, then the heartbeat naming the
 * stored epoch, then the `training.epoch` event.
 */
function epochRecorder(
  deps: ActivityDeps,
  job: TrainingJob,
  heartbeat: (details: TrainingHeartbeat) => void,
) {
  const { db, storage, events } = deps;
  const marks = [Date.now()];
  let progress = job.progress as unknown as Partial<TrainingProgress>;
  return {
    async onEpoch(r: EpochRecord): Promise<void> {
      const metrics = { map50: r.map50, ap50_by_class: r.ap50ByClass };
      const point = { trainLoss: r.trainLoss, valLoss: r.valLoss, metrics };
      await db.trainingCurvePoint.upsert({
        where: { jobId_epoch: { jobId: job.id, epoch: r.epoch } },
        create: { jobId: job.id, epoch: r.epoch, ...point },
        update: { ...point, at: new Date() },
      });
      const stored = r.state === undefined ? null : checkpointKey(job.id);
      if (stored) {
        const file: StoredCheckpoint = { epoch: r.epoch, trainer: job.trainer, state: r.state };
        const body = Buffer.from(JSON.stringify(file));
        await storage.client.putObject(storage.bucket('models'), stored, body, body.length, {
          'Content-Type': 'application/json',
        });
      }
      marks.push(Date.now());
      progress = {
        ...progress,
        epoch: r.epoch,
        epochs: r.epochs,
        train_loss: r.trainLoss,
        val_loss: r.valLoss,
        map50: r.map50,
        ...bestEpoch(progress, r.epoch, r.map50),
        ...pace(marks, r.epochs - r.epoch),
        updated_at: new Date().toISOString(),
      };
      await db.trainingJob.update({
        where: { id: job.id },
        data: {
          progress: progress as Prisma.InputJsonValue,
          ...(stored ? { checkpoint: { epoch: r.epoch, key: stored } } : {}),
        },
      });
      // An epoch without a checkpoint leaves the heartbeat naming the last one that has one.
      if (stored) heartbeat({ epoch: r.epoch, checkpointKey: stored });
      await events.publish('training', 'training.epoch', {
        job_id: job.id,
        epoch: r.epoch,
        epochs: r.epochs,
        train_loss: r.trainLoss,
        val_loss: r.valLoss,
        metrics,
        eta_seconds: progress.eta_seconds ?? null,
      });
    },
    /** The last epoch and its losses, for the model's metrics. */
    final: () => ({ epoch: progress.epoch, train_loss: progress.train_loss, val_loss: progress.val_loss }),
  };
}

/** The training activity of the `gpu` queue. */
export function createTrainingGpuActivities(deps: ActivityDeps) {
  const { db, storage, config, events } = deps;
  const device = config.workers.gpuDevice;

  async function readCheckpoint(key: string): Promise<StoredCheckpoint> {
    const bytes = await readObject(storage, { bucket: storage.bucket('models'), key });
    return JSON.parse(bytes.toString('utf8')) as StoredCheckpoint;
  }

  return {
    /**
     * Trains one job holding the GPU slot: one heartbeating activity on the `gpu` queue. After every
     * epoch the curve point, the checkpoint (models bucket) and the job's progress are written and
     * the heartbeat says which epoch is safe; a retried attempt (a killed worker) resumes after it.
     * Cancelling the workflow reaches the trainer through the heartbeat: it stops between steps and
     * the slot is freed. At the end the trained file is stored and registered as a candidate model.
     */
    async trainModel(input: TrainModelInput): Promise<TrainingOutcome> {
      const ctx = Context.current();
      let holding = false;
      let ticker: NodeJS.Timeout | undefined;
      const workDir = await fs.mkdtemp(path.join(os.tmpdir(), `drivelab-training-${input.jobId}-`));
      try {
        const job0 = await db.trainingJob.findUnique({ where: { id: input.jobId } });
        if (!job0) throw ApplicationFailure.nonRetryable(`no training job ${input.jobId}`, 'JobNotFound');
        if (job0.status === 'completed') return outcome(job0, 0);
        if (isFinished(job0.status))
          throw ApplicationFailure.nonRetryable(
            `training job ${job0.id} is already ${job0.status}`,
            'TrainingRefused',
          );
        const beat = ctx.info.heartbeatDetails as TrainingHeartbeat | undefined;
        const saved = job0.checkpoint as { epoch: number; key: string } | null;
        const key = beat?.checkpointKey ?? saved?.key ?? null;
        // The file holds the newest checkpoint written, which may be newer than the last heartbeat.
        const resume = key ? await readCheckpoint(key) : null;
        const resumedFrom = resume?.epoch ?? 0;
        const config0 = job0.config as unknown as TrainingConfig;
        const [job] = await Promise.all([
          db.trainingJob.update({
            where: { id: job0.id },
            data: {
              status: 'running',
              error: null,
              startedAt: job0.startedAt ?? new Date(),
              progress: {
                ...(job0.progress as object),
                epoch: resumedFrom,
                epochs: config0.epochs,
                resumed_from: resumedFrom,
                attempt: ctx.info.attempt,
              },
            },
          }),
          takeSlot(db, {
            device,
            holderKind: 'training',
            holderId: job0.id,
            workflowId: job0.workflowId,
            sessionId: null,
          }),
        ]);
        holding = true;
        // The stream says the cancel was heard: the trainer stops at its next step and the slot follows.
        ctx.cancellationSignal.addEventListener(
          'abort',
          () => {
            if (ctx.cancellationDetails?.cancelRequested)
              events.publish('training', 'training.cancelling', { job_id: job0.id }).catch(() => undefined);
          },
          { once: true },
        );
        await publishStatus(events, job);
        let details: TrainingHeartbeat = { epoch: resumedFrom, checkpointKey: key };
        ctx.heartbeat(details);
        // Heartbeats keep flowing through a long epoch, so only a dead worker times out and a cancel is heard.
        // The slot row is touched too, so readers of the slot do not take a long epoch for a dead worker.
        ticker = setInterval(
          () => {
            ctx.heartbeat(details);
            db.gpuSlot
              .updateMany({ where: { device, holderId: job0.id }, data: { heartbeatAt: new Date() } })
              .catch(() => undefined); // the next tick tries again
          },
          Math.max(1000, (config.training.heartbeatTimeoutSeconds * 1000) / 3),
        );

        const [commit, parent] = await Promise.all([
          findCommit(db, job.datasetCommitId),
          findModel(db, job.parentVersion),
        ]);
        const [data, parentBytes] = await Promise.all([
          planTrainingData(storage, commit),
          readModelArtifact(deps, parent),
        ]);
        const recorder = epochRecorder(deps, job, (d) => {
          details = d;
          ctx.heartbeat(d);
        });
        const trainerInput: TrainerInput = {
          job,
          config: config0,
          commit,
          data,
          parent,
          parentBytes,
          resume: resume ? { epoch: resume.epoch, state: resume.state } : null,
          onEpoch: recorder.onEpoch,
          signal: ctx.cancellationSignal,
          workDir,
        };
        const trained =
          job.trainer === 'external'
            ? await runExternalTrainer(deps, trainerInput)
            : await runBuiltinTrainer(storage, trainerInput);
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('training cancelled');
        const artifact = await storeModelArtifact(deps, trainedModelVersion(job.id), trained.onnx);
        const done = await registerTrainedModel(deps, {
          jobId: job.id,
          artifact,
          metrics: { ...trained.metrics, final: recorder.final() },
        });
        return outcome(done, resumedFrom);
      } catch (err) {
        // Whatever the trainer threw on its way out, a requested cancel is reported as one.
        if (ctx.cancellationSignal.aborted) throw new CancelledFailure('training cancelled');
        throw asFailure(err);
      } finally {
        clearInterval(ticker);
        if (holding) await releaseSlot(db, device, input.jobId);
        await fs.rm(workDir, { recursive: true, force: true });
      }
    },
  };
}

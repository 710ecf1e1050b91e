import { WorkflowNotFoundError } from '@temporalio/client';
import { recordAudit } from '../../../activities/audit';
import { placeTrainingJob } from '../../../activities/cloud/placement';
import {
  checkTrainingRequest,
  findTrainingJob,
  settleTrainingJob,
  trainingJobOut,
} from '../../../activities/training/jobs';
import { createSweep, findSweep, sweepRanking } from '../../../activities/training/sweeps';
import { ConflictError, InputError } from '../../../core/errors';
import { idCursorArgs, idPage } from '../../../core/pagination';
import { isFinished, taskRefusal, type TrainingConfig } from '../../../core/training-jobs/config';
import type { TrainingProgress } from '../../../core/training-jobs/curve';
import { expandGrid, MAX_SWEEP_POINTS } from '../../../core/training-jobs/sweep';
import { forgetSpend, gateTrainingSweep } from '../../../activities/govern/spend';
import type { Prisma, TrainingJob } from '../../../generated/prisma/client';
import { trainingSweepWorkflow } from '../../../workflows/training-sweep';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import { jobLocation, startTrainingJob } from '../../http/training-start';
import { z } from 'zod';
import {
  RUN_STATUSES,
  SweepName,
  TrainingListQuery,
  TrainingRunsQuery,
  TrainingStartIn,
  TrainingSweepIn,
} from './validators';

/** A started or finished job as a run to compare: where it got to, its best epoch, what it measured. */
function runOut(j: TrainingJob) {
  const p = j.progress as Partial<TrainingProgress>;
  return {
    run_id: j.id,
    name: j.name,
    status: j.status,
    trainer: j.trainer,
    dataset_commit_id: j.datasetCommitId,
    parent_model_version: j.parentVersion,
    model_version: j.modelVersion,
    sweep_name: j.sweepName,
    config: j.config,
    epochs: (j.config as unknown as TrainingConfig).epochs,
    epochs_done: p.epoch ?? 0,
    last: { train_loss: p.train_loss ?? null, val_loss: p.val_loss ?? null, map50: p.map50 ?? null },
    best: { epoch: p.best_epoch ?? null, map50: p.best_map50 ?? null },
    metrics: j.metrics,
    started_at: j.startedAt?.toISOString() ?? null,
    finished_at: j.finishedAt?.toISOString() ?? null,
    curve: `/api/training/runs/${j.id}/curve`,
  };
}

/** Jobs newest first, filtered, by id cursor. */
async function pageOfJobs(
  deps: AppDeps,
  query: z.infer<typeof TrainingListQuery>,
  statuses: readonly string[] | null,
): Promise<{ page: TrainingJob[]; next_cursor: string | null }> {
  const where: Prisma.TrainingJobWhereInput = {
    ...(query.status ? { status: query.status } : statuses ? { status: { in: [...statuses] } } : {}),
    ...(query.sweep_name ? { sweepName: query.sweep_name } : {}),
    ...(query.dataset_commit_id ? { datasetCommitId: query.dataset_commit_id } : {}),
  };
  const rows = await deps.db.trainingJob.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  return idPage(rows, query.limit);
}

/** The `training` group (docs/training.md): jobs, runs, curves, sweeps. */
export function createTrainingRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('training')
    .post(
      '/api/training/start',
      {
        summary:
          'Start a training job (202, Location /api/training/{job_id}): workflow training-<job_id> checks the dataset commit and the parent (default: the current champion), then trains on the GPU slot (or the connected cloud session) and registers the result as a candidate model',
        access: 'reviewer',
        body: { name: 'TrainingStartIn', schema: TrainingStartIn },
        successStatus: 202,
        statuses: {
          404: 'no such dataset commit or parent model',
          409: 'the job is already running, or the kill switch is engaged',
          422: 'refused by name: a 3D or other untrainable task, an external trainer or cloud provider that is not configured, no cloud session, a commit without COCO train/val splits or images, a parent that is not a yolox detector, a commit holding a session whose consent blocks training',
          503: 'the shipped detector (the default parent) is not there',
        },
      },
      async ({ body, principal, req, res }) =>
        startTrainingJob(deps, body, { userId: principal.userId, requestId: String(req.id) }, res),
    )
    .get(
      '/api/training',
      {
        summary:
          'Training jobs, newest first; filter by status, sweep_name, dataset_commit_id; paged by next_cursor',
        access: 'annotator',
        query: TrainingListQuery,
      },
      async ({ query }) => {
        const { page, next_cursor } = await pageOfJobs(deps, query, null);
        return { items: page.map(trainingJobOut), next_cursor };
      },
    )
    .get(
      '/api/training/tasks',
      {
        summary:
          'What this installation can train: each task and trainer, available or not with the reason, the device it runs on, and the compute targets',
        access: 'annotator',
      },
      async () => {
        const t = config.training;
        const external = t.externalCommand ? 'command' : t.externalEndpoint ? 'endpoint' : null;
        const cloudRefusal = await placeTrainingJob(deps, 'cloud').then(
          () => null,
          (err: Error) => err.message,
        );
        return {
          tasks: [
            {
              task: 'detection',
              trainer: 'head-finetune',
              available: true,
              reason: null,
              device: 'cpu',
              detail:
                "fine-tunes the closed-set detector's class and objectness head on features onnxruntime computes on the CPU",
            },
            {
              task: 'detection',
              trainer: 'external',
              available: external !== null,
              reason: external
                ? null
                : 'not configured: set APP_TRAINING__EXTERNAL_COMMAND or APP_TRAINING__EXTERNAL_ENDPOINT',
              device: external ? `the external trainer's own (${external})` : null,
              detail:
                'a command or HTTP endpoint speaking the drivelab.training/1 contract (docs/training.md)',
            },
            {
              task: 'detection3d',
              trainer: null,
              available: false,
              reason: taskRefusal('detection3d'),
              device: null,
              detail: null,
            },
          ],
          compute_targets: [
            { target: 'local', available: true, reason: null, gpu_device: config.workers.gpuDevice },
            { target: 'cloud', available: cloudRefusal === null, reason: cloudRefusal },
          ],
          device: { inference: config.models.device, gpu_device: config.workers.gpuDevice, training: 'cpu' },
          limits: { max_epochs: t.maxEpochs, max_sweep_points: MAX_SWEEP_POINTS },
        };
      },
    )
    .get(
      '/api/training/runs',
      {
        summary:
          'Started and finished jobs as runs to compare side by side: config, epochs done, last and best epoch, validation metrics of parent and trained model; newest first, paged by next_cursor',
        access: 'annotator',
        query: TrainingRunsQuery,
      },
      async ({ query }) => {
        const { page, next_cursor } = await pageOfJobs(deps, query, RUN_STATUSES);
        return { items: page.map(runOut), next_cursor };
      },
    )
    .get(
      '/api/training/runs/{run_id}/curve',
      {
        summary:
          "A run's persisted curve: per epoch the training loss, validation loss and validation mAP@0.5 (and AP per class); run_id is the job id",
        access: 'annotator',
        params: uuidParams('run_id'),
        statuses: { 404: 'no such run' },
      },
      async ({ params }) => {
        const job = await findTrainingJob(db, params.run_id);
        const points = await db.trainingCurvePoint.findMany({
          where: { jobId: job.id },
          orderBy: { epoch: 'asc' },
        });
        return {
          run_id: job.id,
          status: job.status,
          epochs: (job.config as unknown as TrainingConfig).epochs,
          points: points.map((p) => ({
            epoch: p.epoch,
            step: p.step,
            train_loss: p.trainLoss,
            val_loss: p.valLoss,
            metrics: p.metrics,
            at: p.at.toISOString(),
          })),
        };
      },
    )
    .post(
      '/api/training/sweep',
      {
        summary: `Run a hyperparameter grid (at most ${MAX_SWEEP_POINTS} points) as child training workflows that queue for the GPU slot (202, Location /api/training/sweep/{name}); ranked by its metric`,
        access: 'reviewer',
        body: { name: 'TrainingSweepIn', schema: TrainingSweepIn },
        successStatus: 202,
        statuses: {
          404: 'no such dataset commit or parent model',
          409: 'a sweep of that name exists, or the kill switch is engaged',
          422: 'a grid value the config refuses, too many points, or a refused task, commit or parent',
          503: 'the shipped detector (the default parent) is not there',
        },
      },
      async ({ body, principal, res }) => {
        const expanded = expandGrid(body.config, body.grid);
        if (!expanded.ok)
          throw new InputError(
            `invalid grid: ${expanded.errors.map((e) => `${e.field}: ${e.message}`).join('; ')}`,
            expanded.errors.map((e) => ({ ...e, field: `body.${e.field}` })),
          );
        // The point with the most epochs stands for all: the epoch limit is the only check a point's values meet.
        const longest = expanded.points.reduce(
          (a, p) => (p.config.epochs > a.epochs ? p.config : a),
          body.config,
        );
        const { parent } = await checkTrainingRequest(deps, {
          ...body,
          trainer: 'head-finetune',
          compute_target: 'local',
          config: longest,
        });
        const sweep = await createSweep(db, {
          name: body.name,
          grid: body.grid,
          metric: body.metric,
          base: {
            dataset_commit_id: body.dataset_commit_id,
            parent_model_version: parent.modelVersion,
            task: body.task,
            config: body.config,
          },
          actorId: principal.userId,
        });
        try {
          await gateTrainingSweep(
            deps,
            { id: sweep.id, name: sweep.name, createdBy: principal.userId },
            expanded.points.map((p) => p.config.epochs),
          );
          const started = await startWorkflow(deps, res, {
            workflow: trainingSweepWorkflow,
            workflowId: sweep.workflowId,
            args: [
              {
                sweepId: sweep.id,
                gpuTaskQueue: config.temporal.gpuTaskQueue,
                heartbeatTimeoutSeconds: config.training.heartbeatTimeoutSeconds,
              },
            ],
            location: `/api/training/sweep/${encodeURIComponent(sweep.name)}`,
            what: `training sweep ${sweep.name}`,
          });
          return {
            name: sweep.name,
            status: sweep.status,
            metric: sweep.metric,
            grid: sweep.grid,
            points: expanded.points.map((p) => p.values),
            ...started,
          };
        } catch (err) {
          await forgetSpend(db, sweep.id);
          await db.trainingSweep.delete({ where: { id: sweep.id } });
          throw err;
        }
      },
    )
    .get(
      '/api/training/sweep/{name}',
      {
        summary:
          'A sweep: its grid and metric, and its children ranked by the metric, best first (rank null: not completed, or no value)',
        access: 'annotator',
        params: z.object({ name: SweepName }),
        statuses: { 404: 'no such sweep' },
      },
      async ({ params }) => {
        const sweep = await findSweep(db, params.name);
        const children = await sweepRanking(db, sweep);
        return {
          name: sweep.name,
          status: sweep.status,
          metric: sweep.metric,
          grid: sweep.grid,
          base: sweep.base,
          workflow_id: sweep.workflowId,
          created_at: sweep.createdAt.toISOString(),
          finished_at: sweep.finishedAt?.toISOString() ?? null,
          best: children[0]?.rank === 1 ? children[0] : null,
          children,
        };
      },
    )
    .get(
      '/api/training/{job_id}',
      {
        summary:
          'A training job: status (queued, queued-cloud, running, completed, failed, cancelled), progress (epoch, losses, best epoch, pace and ETA), checkpoint, metrics and the model it registered',
        access: 'annotator',
        params: uuidParams('job_id'),
        statuses: { 404: 'no such job' },
      },
      async ({ params }) => trainingJobOut(await findTrainingJob(db, params.job_id)),
    )
    .post(
      '/api/training/{job_id}/cancel',
      {
        summary:
          'Cancel a training job (202, Location: the job): its workflow is cancelled, the training activity hears it through its heartbeat, stops and frees the GPU slot, and the job ends cancelled',
        access: 'reviewer',
        params: uuidParams('job_id'),
        successStatus: 202,
        statuses: { 404: 'no such job', 409: 'the job has already finished' },
      },
      async ({ params, principal, req, res }) => {
        const job = await findTrainingJob(db, params.job_id);
        if (isFinished(job.status))
          throw new ConflictError(
            `training job ${job.id} has already ${job.status === 'completed' ? 'completed' : `ended ${job.status}`}`,
          );
        try {
          await deps.temporal.client.workflow.getHandle(job.workflowId).cancel();
        } catch (err) {
          if (!(err instanceof WorkflowNotFoundError)) throw err;
          // The workflow is gone (it ended without settling the row): nothing runs, so the job ends here.
          await settleTrainingJob(deps, { jobId: job.id, status: 'cancelled', error: 'cancelled' });
        }
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'training.cancel_requested',
          subjectType: 'training_job',
          subjectId: job.id,
          requestId: String(req.id),
        });
        res.status(202).location(jobLocation(job.id));
        return { ...trainingJobOut(await findTrainingJob(db, job.id)), cancel_requested: true };
      },
    );
}

import type { Response } from 'express';
import type { z } from 'zod';
import { recordAudit } from '../../activities/audit';
import { forgetSpend, gateTrainingStart, trainingHourlyUsd } from '../../activities/govern/spend';
import { checkTrainingRequest, createTrainingJob, trainingJobOut } from '../../activities/training/jobs';
import type { TrainingJob } from '../../generated/prisma/client';
import { trainingWorkflow } from '../../workflows/training';
import type { AppDeps } from '../deps';
import { startWorkflow } from './start-workflow';
import type { TrainingStartIn } from '../routes/training/validators';

export const jobLocation = (id: string) => `/api/training/${id}`;

/**
 * The one way a training job starts (POST /api/training/start, and the routes that train on a
 * caller's behalf such as the active-learning loop's retrain): the request's refusals, the job row,
 * the cost gate, workflow training-<job_id>, the audit entry; 202 with Location on `res`.
 * `beforeStart` records what the caller keeps beside the job (it may refuse, like the gate); when it,
 * the gate or the start fails the job row goes again, so no job exists without its workflow.
 */
export async function startTrainingJob(
  deps: AppDeps,
  body: z.infer<typeof TrainingStartIn>,
  actor: { userId: string; requestId: string },
  res: Response,
  opts: { beforeStart?: (job: TrainingJob) => Promise<unknown> } = {},
) {
  const { db, config } = deps;
  const { parent } = await checkTrainingRequest(deps, body);
  const job = await createTrainingJob(deps, body, parent, actor.userId);
  try {
    await gateTrainingStart(deps, job, await trainingHourlyUsd(deps, job));
    await opts.beforeStart?.(job);
    const started = await startWorkflow(deps, res, {
      workflow: trainingWorkflow,
      workflowId: job.workflowId,
      args: [
        {
          jobId: job.id,
          gpuTaskQueue: config.temporal.gpuTaskQueue,
          heartbeatTimeoutSeconds: config.training.heartbeatTimeoutSeconds,
          cloudSessionId: (job.progress as { cloud_session_id?: string }).cloud_session_id ?? null,
        },
      ],
      location: jobLocation(job.id),
      what: `training job ${job.id}`,
    });
    await recordAudit(db, {
      actorId: actor.userId,
      action: 'training.started',
      subjectType: 'training_job',
      subjectId: job.id,
      detail: {
        dataset_commit_id: job.datasetCommitId,
        parent: job.parentVersion,
        trainer: job.trainer,
      },
      requestId: actor.requestId,
    });
    return { ...trainingJobOut(job), ...started };
  } catch (err) {
    // No job without its workflow, nor an estimate without its job.
    await forgetSpend(db, job.id);
    await db.trainingJob.delete({ where: { id: job.id } });
    throw err;
  }
}

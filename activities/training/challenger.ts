import { DEFAULT_EXPORT_PREDICATE } from '../../core/curation/slice';
import { RefusedError } from '../../core/errors';
import { SplitIn } from '../../core/export/splits';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { exportWorkflowId } from '../export';
import { queueExportJob } from '../export/jobs';
import { forgetSpend, gateTrainingStart, trainingHourlyUsd } from '../govern/spend';
import { checkTrainingRequest, createTrainingJob } from './jobs';
import { TrainingConfigIn } from './trainers';

/**
 * The export → train half of a challenger's making, shared by the workflows that make one (an
 * active-learning campaign's iteration, a flywheel run): each queues the platform's own export and
 * training jobs and runs their workflows as children. Refusals are domain errors; each caller maps
 * them to its workflow's non-retryable failure.
 */

/** Sessions split for training only: a challenger is measured on a gold set, not on a test split. */
export const CHALLENGER_SPLIT = { seed: 12345, train: 0.8, val: 0.2, test: 0 };

export interface QueuedChild {
  jobId: string;
  workflowId: string;
}

/**
 * The export job of a challenger's commit, queued for its child workflow: every accepted and
 * auto-accepted object (the platform's training data) outside the gold set's sessions — a drive a
 * challenger is measured on never trains it — split by session into train and val.
 */
export async function queueTrainingExport(
  deps: ActivityDeps,
  input: { name: string; goldSessionIds: readonly string[]; actorId: string | null },
): Promise<QueuedChild> {
  const { job } = await queueExportJob(
    deps,
    {
      name: input.name,
      slice_id: null,
      predicate: {
        ...DEFAULT_EXPORT_PREDICATE,
        ...(input.goldSessionIds.length ? { exclude_session_ids: [...input.goldSessionIds] } : {}),
      },
      formats: ['coco'],
      yolo_task: 'detect',
      include_images: true,
      split: SplitIn.parse(CHALLENGER_SPLIT),
    },
    { userId: input.actorId },
  );
  const workflowId = exportWorkflowId(job.id);
  await deps.db.exportJob.update({ where: { id: job.id }, data: { workflowId } });
  return { jobId: job.id, workflowId };
}

/** The commit a finished export job made. */
export async function exportedCommit(db: Db, jobId: string): Promise<string> {
  const job = await db.exportJob.findUniqueOrThrow({ where: { id: jobId } });
  if (job.state !== 'succeeded' || !job.commitId)
    throw new RefusedError(`export ${job.id} is ${job.state}, not succeeded`);
  return job.commitId;
}

/**
 * A challenger's training job on a commit: the built-in head fine-tuning of the champion, gated on
 * cost, queued for its child workflow. A refused gate leaves no job behind.
 */
export async function queueChallengerTraining(
  deps: ActivityDeps,
  input: { commitId: string; name: string; epochs: number; actorId: string | null },
): Promise<QueuedChild> {
  const request = {
    dataset_commit_id: input.commitId,
    parent_model_version: null,
    name: input.name,
    task: 'detection',
    trainer: 'head-finetune' as const,
    compute_target: 'local' as const,
    config: TrainingConfigIn.parse({ epochs: input.epochs }),
  };
  const { parent } = await checkTrainingRequest(deps, request);
  const job = await createTrainingJob(deps, request, parent, input.actorId);
  try {
    await gateTrainingStart(deps, job, await trainingHourlyUsd(deps, job));
  } catch (err) {
    await forgetSpend(deps.db, job.id);
    await deps.db.trainingJob.delete({ where: { id: job.id } });
    throw err;
  }
  return { jobId: job.id, workflowId: job.workflowId };
}

/** The model a finished training job registered, and the parent it was fine-tuned from. */
export async function trainedModel(
  db: Db,
  jobId: string,
): Promise<{ modelVersion: string; parentVersion: string }> {
  const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
  if (job.status !== 'completed' || !job.modelVersion)
    throw new RefusedError(`training job ${job.id} is ${job.status}`);
  return { modelVersion: job.modelVersion, parentVersion: job.parentVersion };
}

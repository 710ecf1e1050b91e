import { CancelledFailure, Context } from '@temporalio/activity';
import { INSTANCE_TAGS, isOpen, type Job, type JobRequest } from '../../core/cloud';
import { readOnnx } from '../../core/onnx/graph';
import type { CloudSession, Prisma, TrainingJob } from '../../generated/prisma/client';
import { commitFiles, findCommit } from '../datasets/read';
import type { ActivityDeps } from '../deps';
import { findModel, readModelArtifact, sha256Hex, storeModelArtifact } from '../models/artifacts';
import { orRefused, refused } from './failures';
import { cloudProvider, type CloudProvider } from './provider';

export interface CloudTrainingInput {
  jobId: string;
  cloudSessionId: string;
}

/** What a cloud training run hands back: the trained file, stored in the models bucket. */
export interface CloudTrainingResult {
  modelKey: string;
  sha256: string;
  sizeBytes: number;
  metrics: Record<string, unknown>;
}

/** What a retried attempt needs: the provider's job, so it is followed, not submitted (and paid for) twice. */
export interface CloudTrainingHeartbeat {
  providerJobId: string | null;
  status: string;
  progress: Record<string, unknown>;
}

/** How often to heartbeat while a provider request or a download is under way. */
const HEARTBEAT_EVERY_MS = 5000;
/** S3 presigned URLs live at most 7 days. */
const MAX_URL_SECONDS = 7 * 24 * 3600;
/** The job's own inputs (commit, parent model) are missing or unreadable. */
const REFUSED = 'CloudTrainingRefused';

/** The job for the provider: the commit's files and the parent model as presigned URLs, each with its SHA-256. */
async function jobRequest(
  deps: ActivityDeps,
  job: TrainingJob,
  session: { id: string; instanceId: string },
): Promise<JobRequest> {
  const { db, storage, config } = deps;
  const expiry = Math.min(MAX_URL_SECONDS, Math.ceil(config.cloud.maxSessionHours * 3600));
  const commit = await orRefused(findCommit(db, job.datasetCommitId), REFUSED);
  const parent = await orRefused(findModel(db, job.parentVersion), REFUSED);
  // Read (and checked against its registered SHA-256) before it leaves: the shipped detector lives on disk, not in the bucket.
  const parentBytes = await orRefused(readModelArtifact(deps, parent), REFUSED);
  const parentKey = `cloud-jobs/${job.id}/parent.onnx`;
  await storage.client.putObject(storage.bucket('models'), parentKey, parentBytes, parentBytes.length, {
    'Content-Type': 'application/octet-stream',
  });
  const exports = storage.bucket('exports');
  return {
    instance_id: session.instanceId,
    tags: {
      [INSTANCE_TAGS.owner]: config.cloud.instanceTag,
      [INSTANCE_TAGS.sessionId]: session.id,
      job_id: job.id,
    },
    task: job.task,
    trainer: job.trainer,
    config: job.config,
    parent_model: {
      version: parent.modelVersion,
      url: await storage.client.presignedGetObject(storage.bucket('models'), parentKey, expiry),
      sha256: sha256Hex(parentBytes),
      size_bytes: parentBytes.length,
    },
    dataset: {
      commit_id: commit.commitId,
      files: await Promise.all(
        commitFiles(commit).map(async (f) => ({
          ...f,
          url: await storage.client.presignedGetObject(exports, `${commit.prefix}${f.path}`, expiry),
        })),
      ),
    },
  };
}

/**
 * The cpu activity that trains a parked (`queued-cloud`) job on the connected cloud GPU session
 * (docs/cloud.md, "Cloud training"): waits for the session to be active, submits the job to the
 * provider's job API (once: a retried attempt follows the job its heartbeat names), polls it while
 * heartbeating and mirroring its progress into the job row, then downloads the trained ONNX,
 * checks it against the provider's SHA-256, and stores it in the models bucket. A failed job, an
 * ended session or a file that is no ONNX model fails it by name, non-retryably.
 */
export function createCloudTrainingActivity(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const pollMs = config.cloud.pollSeconds * 1000;

  return async function runCloudTraining(input: CloudTrainingInput): Promise<CloudTrainingResult> {
    const ctx = Context.current();
    const job = await db.trainingJob.findUnique({ where: { id: input.jobId } });
    if (!job) throw refused(`no training job ${input.jobId}`, 'TrainingJobNotFound');
    if (job.computeTarget !== 'cloud')
      throw refused(
        `training job ${job.id} runs on the ${job.computeTarget} GPU slot, not in the cloud`,
        REFUSED,
      );
    let provider: CloudProvider;
    try {
      provider = cloudProvider(config.cloud);
    } catch (err) {
      throw refused((err as Error).message, 'CloudUnavailable');
    }
    let beat: CloudTrainingHeartbeat = (ctx.info.heartbeatDetails as CloudTrainingHeartbeat | undefined) ?? {
      providerJobId: null,
      status: 'waiting-for-session',
      progress: {},
    };
    const ticker = setInterval(() => ctx.heartbeat(beat), HEARTBEAT_EVERY_MS);
    const report = async (next: CloudTrainingHeartbeat) => {
      beat = next;
      ctx.heartbeat(beat);
      await db.trainingJob.update({
        where: { id: job.id },
        data: {
          progress: {
            // What the job row already says (the training routes keep cloud_session_id there) stays.
            ...(job.progress as Record<string, unknown>),
            ...next.progress,
            cloud: {
              provider: provider.name,
              session_id: input.cloudSessionId,
              provider_job_id: next.providerJobId,
              status: next.status,
            },
          } as Prisma.InputJsonValue,
        },
      });
    };
    const ended = (session: CloudSession | null) =>
      refused(
        `cloud session ${input.cloudSessionId} ${session ? `is ${session.status}` : 'does not exist'}: training job ${job.id} cannot run on it`,
        'CloudSessionEnded',
      );
    const sessionNow = () => db.cloudSession.findUnique({ where: { id: input.cloudSessionId } });
    /** The session once it is active, with the instance it runs; a session that ends meanwhile fails the job by name. */
    const activeSession = async (): Promise<{ id: string; instanceId: string }> => {
      for (;;) {
        const session = await sessionNow();
        if (!session || !isOpen(session.status)) throw ended(session);
        if (session.status === 'active' && session.instanceId)
          return { id: session.id, instanceId: session.instanceId };
        ctx.heartbeat(beat);
        await ctx.sleep(pollMs);
      }
    };

    try {
      let providerJob: Job;
      if (beat.providerJobId) providerJob = await provider.getJob(beat.providerJobId);
      else {
        const session = await activeSession();
        // The provider answers a repeated key with the job it already has.
        providerJob = await provider.submitJob(await jobRequest(deps, job, session), `training-${job.id}`);
      }
      for (;;) {
        await report({
          providerJobId: providerJob.id,
          status: providerJob.status,
          progress: providerJob.progress,
        });
        if (providerJob.status === 'succeeded') break;
        if (providerJob.status === 'failed' || providerJob.status === 'cancelled')
          throw refused(
            `cloud provider ${provider.name} reports training job ${providerJob.id} ${providerJob.status}: ${providerJob.error ?? 'no reason given'}`,
            'CloudTrainingFailed',
          );
        const session = await sessionNow();
        if (!session || !isOpen(session.status)) {
          await provider.cancelJob(providerJob.id);
          throw ended(session);
        }
        await ctx.sleep(pollMs);
        providerJob = await provider.getJob(providerJob.id);
      }

      const result = providerJob.result;
      if (!result)
        throw refused(
          `cloud provider ${provider.name} reports training job ${providerJob.id} succeeded but names no model file`,
          'CloudTrainingFailed',
        );
      const bytes = await provider.downloadModel(result.model_url);
      const sha256 = sha256Hex(bytes);
      // A truncated download is worth another attempt; the heartbeat keeps the job, so nothing is retrained.
      if (sha256 !== result.sha256 || bytes.length !== result.size_bytes)
        throw new Error(
          `the model file of cloud training job ${providerJob.id} does not match what ${provider.name} declared: SHA-256 ${sha256} and ${bytes.length} bytes, not ${result.sha256} and ${result.size_bytes}`,
        );
      try {
        readOnnx(bytes);
      } catch (err) {
        throw refused(
          `cloud provider ${provider.name} returned a file that is not an ONNX model for training job ${providerJob.id}: ${(err as Error).message}`,
          'CloudModelInvalid',
        );
      }
      const stored = await storeModelArtifact({ storage }, `cloud-${job.id}`, bytes);
      await report({ ...beat, progress: { ...beat.progress, model_key: stored.key } });
      return {
        modelKey: stored.key,
        sha256: stored.sha256,
        sizeBytes: stored.sizeBytes,
        metrics: result.metrics,
      };
    } catch (err) {
      // A cancelled job stops paying at the provider too.
      if (err instanceof CancelledFailure && beat.providerJobId)
        await provider
          .cancelJob(beat.providerJobId)
          .catch((cancelErr: unknown) =>
            ctx.log.warn('cancelling the provider job failed', { error: (cancelErr as Error).message }),
          );
      throw err;
    } finally {
      clearInterval(ticker);
    }
  };
}

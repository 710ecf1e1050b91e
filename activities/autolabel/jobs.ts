import type { AutolabelJob } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { recordAudit } from '../audit';

/** A job as GET /api/autolabel/{job_id} and the jobs event stream show it. */
export function jobOut(job: AutolabelJob) {
  const planned = job.framesPlanned;
  return {
    job_id: job.id,
    session_id: job.sessionId,
    workflow_id: job.workflowId,
    mode: job.mode,
    state: job.state,
    compute_target: job.computeTarget,
    only_unlabelled: job.onlyUnlabelled,
    limit: job.limit,
    policy: job.policy,
    frames_planned: planned,
    frames_done: job.framesDone,
    last_frame_index: job.lastFrameIndex,
    progress: job.state === 'completed' ? 1 : planned ? Math.min(0.99, job.framesDone / planned) : 0,
    objects_created: job.objectsCreated,
    objects_deleted: job.objectsDeleted,
    tally: job.tally,
    /** Models of the paths that ran (closed_set: file@sha256 prefix). */
    models: job.paths,
    attempts: job.attempts,
    resumed_from: job.resumedFrom,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    finished_at: job.finishedAt?.toISOString() ?? null,
  };
}

/** Job bookkeeping that runs on the `cpu` queue (it must work while the GPU slot is busy). */
export function createAutolabelJobActivities(deps: ActivityDeps) {
  return {
    async failAutolabelJob(input: { jobId: string; error: string }): Promise<void> {
      const job = await deps.db.autolabelJob.update({
        where: { id: input.jobId },
        data: { state: 'failed', error: input.error, finishedAt: new Date() },
      });
      await recordAudit(deps.db, {
        actorId: null,
        action: 'autolabel.failed',
        subjectType: 'session',
        subjectId: job.sessionId,
        detail: { job_id: job.id, error: input.error },
      });
      await deps.events.publish('jobs', 'autolabel.failed', jobOut(job));
    },
  };
}

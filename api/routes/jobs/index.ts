import { recordAudit } from '../../../activities/audit';
import { jobCancelWorkflowId } from '../../../activities/jobs/cancel';
import { findJob, listJobs } from '../../../activities/jobs/list';
import { ConflictError, NotAllowedError } from '../../../core/errors';
import { cancelRefusal, isFinishedState, JOB_KINDS, type JobKind } from '../../../core/jobs/kinds';
import { jobCancelWorkflow } from '../../../workflows/job-cancel';
import { roleAtLeast, type Role } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import { JobParams, JobsQuery } from './validators';

/**
 * Who sees and who cancels each kind (docs/jobs.md): the role of the kind's own read route, and
 * the role that may start such a job.
 */
export const JOB_ROLES: Record<JobKind, { read: Role; cancel: Role }> = {
  ingest: { read: 'annotator', cancel: 'reviewer' },
  autolabel: { read: 'annotator', cancel: 'reviewer' },
  export: { read: 'reviewer', cancel: 'reviewer' },
  training: { read: 'annotator', cancel: 'reviewer' },
  corpus: { read: 'reviewer', cancel: 'admin' },
  inference: { read: 'annotator', cancel: 'reviewer' },
  errordetect: { read: 'annotator', cancel: 'reviewer' },
  edgeforge: { read: 'annotator', cancel: 'reviewer' },
  campaign: { read: 'annotator', cancel: 'reviewer' },
  flywheel: { read: 'annotator', cancel: 'reviewer' },
};

/** The `jobs` group (docs/jobs.md): every kind of job in one list, and one way to cancel them. */
export function createJobsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('jobs')
    .get(
      '/api/jobs',
      {
        summary:
          'Jobs of every kind (ingest, autolabel, export, training, corpus, inference, errordetect, edgeforge) newest first, each with its state (queued, running, completed, failed, cancelled), progress 0..1 where its table knows it, its workflow and its own route; ?kind= and ?state= filter; keyset pages (pass next_cursor back as cursor). Kinds whose own routes need a higher role than the caller holds are left out',
        access: 'annotator',
        query: JobsQuery,
        statuses: { 403: "?kind= names a kind the caller's role may not read" },
      },
      async ({ query, principal }) => {
        const readable = JOB_KINDS.filter((k) => roleAtLeast(principal.role, JOB_ROLES[k].read));
        if (query.kind && !readable.includes(query.kind))
          throw new NotAllowedError(
            `${query.kind} jobs are shown to the ${JOB_ROLES[query.kind].read} role and above`,
          );
        const { items, next_cursor } = await listJobs(db, {
          kinds: query.kind ? [query.kind] : readable,
          state: query.state,
          limit: query.limit,
          cursor: query.cursor,
        });
        return { items, next_cursor, limit: query.limit };
      },
    )
    .post(
      '/api/jobs/{kind}/{job_id}/cancel',
      {
        summary:
          "Cancel a job (202, Location: the job's own route): workflow job-cancel-<kind>-<job_id> cancels the job's workflow, waits until its running step has ended and its failure report is written, then marks the job cancelled (what it had committed stays) and emits job.cancelled. A job that completes before the cancel reaches it stays completed. Role: the one that may start the kind (admin for corpus runs, reviewer otherwise)",
        access: 'reviewer',
        params: JobParams,
        successStatus: 202,
        statuses: {
          403: "the kind's jobs are cancelled by a higher role",
          404: 'no such job of that kind',
          409: 'the job has already finished, a revert of it is under way, or its cancel is already under way',
        },
      },
      async ({ params, principal, req, res }) => {
        const { kind, job_id: jobId } = params;
        const role = JOB_ROLES[kind].cancel;
        if (!roleAtLeast(principal.role, role))
          throw new NotAllowedError(
            `cancelling ${kind} jobs needs the ${role} role; you are ${principal.role}`,
          );
        const job = await findJob(db, kind, jobId);
        if (isFinishedState(job.state))
          throw new ConflictError(`${kind} job ${jobId} has already finished (${job.raw_state})`);
        const refusal = cancelRefusal(kind, job.raw_state);
        if (refusal) throw new ConflictError(`${kind} job ${jobId} cannot be cancelled now: ${refusal}`);
        const requestId = String(req.id);
        const started = await startWorkflow(deps, res, {
          workflow: jobCancelWorkflow,
          workflowId: jobCancelWorkflowId(kind, jobId),
          args: [{ kind, jobId, workflowId: job.workflow_id, actorId: principal.userId, requestId }],
          location: job.link,
          what: `a cancel of ${kind} job ${jobId}`,
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'job.cancel_requested',
          subjectType: 'job',
          subjectId: jobId,
          detail: { kind, workflow_id: job.workflow_id, cancel_workflow_id: started.workflow_id },
          requestId,
        });
        return { ...job, cancel_requested: true, cancel_workflow_id: started.workflow_id };
      },
    );
}

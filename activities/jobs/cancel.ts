import { ApplicationFailure, Context } from '@temporalio/activity';
import { WorkflowNotFoundError } from '@temporalio/client';
import { completedStatesOf, CANCELLED, type JobKind, type JobState } from '../../core/jobs/kinds';
import { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { emitJobEvent } from '../events/jobs';
import { JOB_SOURCES } from './sources';

/** What JobCancelWorkflow is given: the job, its workflow (null when it never had one), and who asked. */
export interface JobCancelInput {
  kind: JobKind;
  jobId: string;
  workflowId: string | null;
  actorId: string;
  requestId: string | null;
}

/** How the job's workflow ended (Temporal's status name), or NOT_FOUND when there is none to end. */
export type WorkflowEnd = string;

export interface JobCancelOutcome {
  kind: JobKind;
  job_id: string;
  state: JobState;
  raw_state: string;
  /** False when the job completed before the cancel reached it: it stays completed. */
  cancelled: boolean;
  workflow_closed_as: WorkflowEnd;
}

/** How often the job's workflow is asked whether it has closed. */
const POLL_MS = 1000;

export const jobCancelWorkflowId = (kind: JobKind, jobId: string) => `job-cancel-${kind}-${jobId}`;

/** The activities of JobCancelWorkflow (docs/jobs.md), on the `cpu` queue. */
export function createJobActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /**
     * Waits up to `waitSeconds` for the job's workflow to close and says how it did, or null while
     * it still runs (the workflow asks again, so no activity slot is held for a long step).
     */
    async awaitJobWorkflowEnd(input: {
      workflowId: string;
      waitSeconds: number;
    }): Promise<WorkflowEnd | null> {
      const ctx = Context.current();
      const handle = ctx.client.workflow.getHandle(input.workflowId);
      const until = Date.now() + input.waitSeconds * 1000;
      for (;;) {
        let status: string;
        try {
          status = (await handle.describe()).status.name;
        } catch (err) {
          if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
          throw err;
        }
        // Without a run id the latest run of a chain is described: continued-as-new means it goes on.
        if (status !== 'RUNNING' && status !== 'CONTINUED_AS_NEW') return status;
        if (Date.now() >= until) return null;
        ctx.heartbeat();
        await ctx.sleep(POLL_MS);
      }
    },

    /**
     * Ends the job as cancelled once its workflow has closed, unless it completed: with nothing of
     * it running any more, its rows are what its steps committed and its failure report cleaned
     * up. `job.cancelled` is emitted in the same transaction, once per job (a retried activity, or
     * a training job whose own workflow already ended it cancelled, finds it there).
     */
    async settleCancelledJob(input: JobCancelInput & { closedAs: WorkflowEnd }): Promise<JobCancelOutcome> {
      const source = JOB_SOURCES[input.kind];
      const settled = await db.$transaction(async (tx) => {
        const keep = Prisma.join([...completedStatesOf(input.kind), CANCELLED]);
        const changed =
          input.closedAs === 'COMPLETED'
            ? 0
            : await tx.$executeRaw`
                UPDATE ${Prisma.raw(source.table)} SET ${source.cancelled}
                 WHERE id = ${input.jobId}::uuid AND COALESCE(${source.state}, '') NOT IN (${keep})`;
        const ended = changed > 0;
        const [item] = await source.read(tx, [input.jobId]);
        // Deleted meanwhile (an ingest's session removed): nothing is left to mark.
        if (!item)
          throw ApplicationFailure.nonRetryable(`${input.kind} job ${input.jobId} is gone`, 'JobNotFound');
        if (item.state === 'cancelled')
          await emitJobEvent(
            tx,
            { kind: input.kind, id: input.jobId, startedBy: item.created_by },
            { kind: 'job.cancelled', by: input.actorId },
          );
        if (ended)
          await recordAudit(tx, {
            actorId: input.actorId,
            action: 'job.cancelled',
            subjectType: 'job',
            subjectId: input.jobId,
            detail: { kind: input.kind, workflow_id: input.workflowId, workflow_closed_as: input.closedAs },
            requestId: input.requestId,
          });
        return { item, ended };
      });
      const { item } = settled;
      // The stream notice is a courtesy to open pages; the event row above is the record.
      if (settled.ended)
        await deps.events
          .publish('jobs', 'job.cancelled', { ...item })
          .catch((err: unknown) =>
            Context.current().log.warn('job.cancelled not published on the stream', { err }),
          );
      return {
        kind: input.kind,
        job_id: input.jobId,
        state: item.state,
        raw_state: item.raw_state,
        cancelled: item.state === 'cancelled',
        workflow_closed_as: input.closedAs,
      };
    },
  };
}

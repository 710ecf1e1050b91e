import { z } from 'zod';
import { jobCancelWorkflowId } from '../../../activities/jobs/cancel';
import { jobsInFlight } from '../../../activities/jobs/list';
import {
  engageKillSwitch,
  governanceStateView,
  KILLSWITCH_JOB_KINDS,
  recordStopped,
  releaseKillSwitch,
  type StoppedJob,
} from '../../../activities/govern/killswitch';
import { ConflictError } from '../../../core/errors';
import { cancelRefusal } from '../../../core/jobs/kinds';
import { jobCancelWorkflow } from '../../../workflows/job-cancel';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { beginWorkflow } from '../../http/start-workflow';

/** Why the switch is engaged (the spec does not show the body; docs/killswitch.md). */
export const KillSwitchIn = z.strictObject({ reason: z.string().trim().min(1).max(500) });

/** The kill switch and the governance state of the `govern` group (docs/killswitch.md). */
export function createGovernKillSwitchRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('govern')
    .post(
      '/api/govern/killswitch/engage',
      {
        summary:
          'Engages the kill switch: every queued or running auto-label, training, export, corpus run and campaign is stopped through its job cancel (job-cancel-<kind>-<job_id>: the job stops at a safe point and ends cancelled), and every start of such work is refused (409, with the reason) until release. Audited; engaging again stops what started since',
        access: 'admin',
        body: { name: 'KillSwitchIn', schema: KillSwitchIn },
        statuses: {
          503: 'the workflow service does not answer (the switch stays engaged; engage again to stop the rest)',
        },
      },
      async ({ body, principal, req }) => {
        const actor = actorOf(principal, req);
        // Engaged first: a start that comes while the jobs are being stopped is already refused.
        await engageKillSwitch(db, {
          reason: body.reason,
          actorId: actor.userId,
          requestId: actor.requestId,
        });
        const stopped: StoppedJob[] = [];
        try {
          for (const job of await jobsInFlight(db, KILLSWITCH_JOB_KINDS)) {
            const base = { kind: job.kind, job_id: job.job_id, workflow_id: job.workflow_id };
            const refusal = cancelRefusal(job.kind, job.raw_state);
            if (refusal) {
              stopped.push({ ...base, outcome: 'not_stoppable', cancel_workflow_id: null, reason: refusal });
              continue;
            }
            const cancelId = jobCancelWorkflowId(job.kind, job.job_id);
            try {
              await beginWorkflow(deps, {
                workflow: jobCancelWorkflow,
                workflowId: cancelId,
                args: [
                  {
                    kind: job.kind,
                    jobId: job.job_id,
                    workflowId: job.workflow_id,
                    actorId: actor.userId,
                    requestId: actor.requestId,
                  },
                ],
                what: `a cancel of ${job.kind} job ${job.job_id}`,
              });
              stopped.push({ ...base, outcome: 'stopping', cancel_workflow_id: cancelId });
            } catch (err) {
              if (!(err instanceof ConflictError)) throw err;
              stopped.push({ ...base, outcome: 'already_stopping', cancel_workflow_id: cancelId });
            }
          }
        } finally {
          await recordStopped(db, stopped);
        }
        return governanceStateView(db);
      },
    )
    .post(
      '/api/govern/killswitch/release',
      {
        summary:
          'Releases the kill switch: starts are allowed again (what it stopped stays cancelled). Audited',
        access: 'admin',
        statuses: { 409: 'the kill switch is not engaged' },
      },
      async ({ principal, req }) => {
        const actor = actorOf(principal, req);
        await releaseKillSwitch(db, { actorId: actor.userId, requestId: actor.requestId });
        return governanceStateView(db);
      },
    )
    .get(
      '/api/govern/state',
      {
        summary:
          'The governance state: the kill switch (engaged, reason, by whom and when, released) and the jobs its last engage stopped, each with the state it is in now',
        access: 'reviewer',
      },
      async () => governanceStateView(db),
    );
}

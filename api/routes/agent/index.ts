import { NotFoundError } from '../../../core/errors';
import { agentRunOut, notLabelled } from '../../../activities/agent-runs/runs';
import { beginRevert, revertWorkflowId } from '../../../activities/agent-runs/revert';
import { recordAudit } from '../../../activities/audit';
import { revertAgentRunWorkflow } from '../../../workflows/revert-agent-run';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

/**
 * The `agent` group's run routes: read a recorded corpus run and revert it (docs/agent-runs.md).
 * The group's other routes belong to later work.
 */
export function createAgentRunRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('agent')
    .get(
      '/api/agent/runs/{run_id}',
      {
        summary:
          'An agent run: status, what it was asked, what it changed (sessions, frames, objects replaced and created, what a revert did) and the sessions it could not label',
        access: 'reviewer',
        params: uuidParams('run_id'),
        statuses: { 404: 'no such run' },
      },
      async ({ params }) => {
        const run = await db.agentRun.findUnique({ where: { id: params.run_id } });
        if (!run) throw new NotFoundError(`no agent run ${params.run_id}`);
        return agentRunOut(run, await notLabelled(db, run.id));
      },
    )
    .post(
      '/api/agent/runs/{run_id}/revert',
      {
        summary:
          'Undo a finished run (202): the objects it replaced come back exactly, the ones it made go; objects a person reviewed since stay, frames labelled again since are left alone',
        access: 'admin',
        params: uuidParams('run_id'),
        successStatus: 202,
        statuses: { 404: 'no such run', 409: 'the run is running, reverting or already reverted' },
      },
      async ({ params, res, principal, req }) => {
        const { run, previousStatus } = await beginRevert(db, params.run_id);
        try {
          const started = await startWorkflow(deps, res, {
            workflow: revertAgentRunWorkflow,
            workflowId: revertWorkflowId(run.id),
            args: [{ runId: run.id, actorId: principal.userId }],
            location: `/api/agent/runs/${run.id}`,
            what: `a revert of agent run ${run.id}`,
          });
          await recordAudit(db, {
            actorId: principal.userId,
            action: 'agent_run.revert.started',
            subjectType: 'agent_run',
            subjectId: run.id,
            detail: { kind: run.kind },
            requestId: String(req.id),
          });
          const { run_id: workflowRunId, ...workflow } = started;
          return {
            run_id: run.id,
            status: 'reverting',
            ...workflow,
            workflow_run_id: workflowRunId,
            events_url: '/api/events/jobs',
          };
        } catch (err) {
          await db.agentRun.update({ where: { id: run.id }, data: { status: previousStatus } });
          throw err;
        }
      },
    );
}

import { z } from 'zod';
import { findInterruptedRuns, listAgentRuns } from '../../../activities/agent-runs/list';
import { agentRunOut, notLabelled, type AgentRunStatus } from '../../../activities/agent-runs/runs';
import { NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import {
  assertMayRevert,
  RelabelStartIn,
  resumeAgentRun,
  startRelabelCorpus,
  startRunRevert,
} from '../../http/agent-runs';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

const RUN_STATUSES: [AgentRunStatus, ...AgentRunStatus[]] = [
  'running',
  'completed',
  'failed',
  'cancelled',
  'reverting',
  'reverted',
  'revert_failed',
];

export const AgentRunsQuery = z.strictObject({
  kind: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .meta({ description: 'only runs of this kind (redetect-all, relabel, pii-recheck …)' }),
  status: z.enum(RUN_STATUSES).optional(),
  limit: limitParam(50, 200),
  cursor: z.string().max(512).optional().meta({ description: 'next_cursor of the previous page' }),
});

/** The body of POST /api/agent/relabel/all: a corpus relabel of every session. */
const RelabelAllIn = RelabelStartIn.omit({ session_ids: true });

/**
 * The `agent` group's run routes (docs/agent-runs.md): list and read recorded corpus runs, find the
 * interrupted ones and resume them, revert a run, and the corpus relabel (docs/relabel.md). The
 * group's other routes belong to later work.
 */
export function createAgentRunRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('agent')
    .get(
      '/api/agent/runs',
      {
        summary:
          'Recorded agent and corpus runs, newest first, by keyset pagination (pass next_cursor back as cursor), filtered by kind and status',
        access: 'reviewer',
        query: AgentRunsQuery,
      },
      async ({ query }) =>
        listAgentRuns(db, {
          kinds: query.kind ? [query.kind] : undefined,
          status: query.status,
          limit: query.limit,
          cursor: query.cursor,
        }),
    )
    .get(
      '/api/agent/runs/interrupted',
      {
        summary:
          'Runs that say running or reverting while nothing runs them: their workflow closed without settling them or is gone, a later run took their one-at-a-time workflow id, or the request that applied them ended; each with why and whether it can be resumed',
        access: 'reviewer',
        statuses: { 503: 'the workflow service does not answer' },
      },
      async () => {
        const found = await findInterruptedRuns(db, deps.temporal.client.workflow);
        return {
          items: found.map(({ run, workflow_status, reason }) => ({
            ...agentRunOut(run),
            workflow_status,
            reason,
            resume_url: `/api/agent/runs/${run.id}/resume`,
          })),
        };
      },
    )
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
      '/api/agent/runs/{run_id}/resume',
      {
        summary:
          'Resume an interrupted run (202): its workflow starts again from where its ledger stopped, skipping what it already wrote; a run interrupted while reverting resumes its revert',
        access: 'admin',
        params: uuidParams('run_id'),
        successStatus: 202,
        statuses: {
          404: 'no such run',
          409: 'the run is not interrupted (finished, or its workflow runs), or its kind cannot be resumed',
          503: 'the workflow service does not answer',
        },
      },
      async ({ params, res, principal, req }) =>
        resumeAgentRun(deps, res, params.run_id, actorOf(principal, req)),
    )
    .post(
      '/api/agent/runs/{run_id}/revert',
      {
        summary:
          "Undo a finished run (202): the objects it replaced come back exactly, the ones it made go; objects a person reviewed since stay, frames labelled again since are left alone. A track relabel (kind track-relabel) gets its objects' class, source and state back. Admin for any run; a reviewer may undo a track relabel they made",
        access: 'reviewer',
        params: uuidParams('run_id'),
        successStatus: 202,
        statuses: {
          403: 'not an admin, and not a track relabel the caller made',
          404: 'no such run',
          409: 'the run is running, reverting or already reverted',
        },
      },
      async ({ params, res, principal, req }) => {
        await assertMayRevert(db, params.run_id, principal);
        return startRunRevert(deps, res, params.run_id, actorOf(principal, req));
      },
    )
    .post(
      '/api/agent/relabel/all',
      {
        summary:
          'Start a corpus relabel of every session (202, Location: the run): the closed-set detector reclassifies each machine-made box on the GPU slot, and every object it moves goes to review (source relabel), one revertible AgentRun of kind relabel (workflow relabel-corpus); human objects are never touched',
        access: 'admin',
        body: { name: 'RelabelAllIn', schema: RelabelAllIn },
        successStatus: 202,
        statuses: {
          409: 'a corpus relabel is already running, or the kill switch is engaged',
          422: 'a class is not in the ontology, or the cost gate refuses',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => startRelabelCorpus(deps, res, body, actorOf(principal, req)),
    );
}

import { z } from 'zod';
import { queueAgentRun, settleAgentRun } from '../../../activities/agent-runs/runs';
import { recordAudit } from '../../../activities/audit';
import { CLEANUP_SWEEP_KIND } from '../../../activities/pii-recheck/cleanup';
import {
  applyRecheck,
  planRecheck,
  PII_BACKFILL_KIND,
  PII_RECHECK_KIND,
} from '../../../activities/pii-recheck/recheck';
import { summarisePiiRun } from '../../../activities/pii-recheck/runs';
import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import { NotFoundError } from '../../../core/errors';
import { emptyPiiTally } from '../../../core/pii-recheck/tally';
import { CLEANUP_SWEEP_WORKFLOW_ID, cleanupSweepWorkflow } from '../../../workflows/pii-recheck';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { PiiRunIn, startPiiRun } from '../../http/pii-runs';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflowFor } from '../../http/start-workflow';

/** The spec's CleanupIn. */
export const CleanupIn = z.strictObject({
  do_pii: z.boolean().default(true),
  pii_limit: z.int().min(1).max(1_000_000).default(5000),
});

/**
 * The `agent` group's PII re-checks (docs/pii-recheck.md): the crop-and-upscale re-check over the
 * corpus and of one frame (with its plan), and the cleanup sweep. Every write only ever adds
 * redaction and is a revertible AgentRun.
 */
export function createAgentReanalyzeRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('agent')
    .post(
      '/api/agent/reanalyze/all',
      {
        summary:
          'Start the crop-and-upscale PII re-check over the corpus (or the listed sessions): every annotated person and vehicle cut from its frame, enlarged and searched for faces and plates, on the GPU slot, as one revertible AgentRun (kind pii-recheck, workflow pii-recheck-all); only ever adds redaction (202, Location: the run)',
        access: 'admin',
        body: { name: 'ReanalyzeAllIn', schema: PiiRunIn },
        successStatus: 202,
        statuses: {
          409: 'a PII re-check is already running, or the kill switch is engaged',
          422: 'a listed session does not exist',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) =>
        startPiiRun(deps, res, PII_RECHECK_KIND, body, actorOf(principal, req)),
    )
    .post(
      '/api/agent/frames/{frame_id}/reanalyze/plan',
      {
        summary:
          'The crop-and-upscale PII re-check of one frame, without writing: each annotated person and vehicle searched (its crop and enlargement), the faces and plates found, the regions recorded (all stay) and what would be added',
        access: 'reviewer',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame', 503: 'a PII model is not there' },
      },
      async ({ params }) => (await planRecheck(deps, params.frame_id)).plan,
    )
    .post(
      '/api/agent/frames/{frame_id}/reanalyze',
      {
        summary:
          'Apply the crop-and-upscale PII re-check to one frame as a revertible AgentRun (kind pii-recheck, scope frame): what it finds joins the recorded regions and is pixelated onto the redacted copy; nothing recorded is removed or shrunk',
        access: 'reviewer',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame', 503: 'a PII model is not there' },
      },
      async ({ params, principal, req }) => {
        const actor = actorOf(principal, req);
        const frame = await db.frame.findUnique({ where: { id: params.frame_id }, select: { id: true } });
        if (!frame) throw new NotFoundError(`no frame ${params.frame_id}`);
        const run = await queueAgentRun(
          db,
          PII_RECHECK_KIND,
          { session_ids: null, limit: 1, scope: 'frame', frame_id: frame.id },
          actor.userId,
          null,
        );
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'agent_run.started',
          subjectType: 'agent_run',
          subjectId: run.id,
          detail: { kind: run.kind, frame_id: frame.id },
          requestId: actor.requestId,
        });
        try {
          const { plan, added } = await applyRecheck(deps, run.id, frame.id);
          const changes = await summarisePiiRun(db, run.id, { ...emptyPiiTally(), checked: 1 });
          await settleAgentRun(deps, { runId: run.id, status: 'completed' }, changes);
          return { run_id: run.id, status: 'completed', plan, added, changes };
        } catch (err) {
          const tally = {
            checked: 1,
            failed: 1,
            failures: [{ frame_id: frame.id, reason: (err as Error).message }],
          };
          await settleAgentRun(
            deps,
            { runId: run.id, status: 'failed', error: (err as Error).message },
            await summarisePiiRun(db, run.id, tally),
          );
          throw err;
        }
      },
    )
    .post(
      '/api/agent/cleanup-sweep',
      {
        summary:
          'Run the cleanup sweep (CleanupIn) as workflow cleanup-sweep, a governance run: with do_pii, the PII pass on up to pii_limit frames lacking an audit (a child pii-backfill AgentRun, revertible); then the blobs of the frames and redacted buckets that no row names and that are old enough go (202, Location: the PII run, else the audit log of the sweep)',
        access: 'admin',
        body: { name: 'CleanupIn', schema: CleanupIn },
        successStatus: 202,
        statuses: {
          409: 'a cleanup sweep is already running, or the kill switch is engaged',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, res, principal, req }) => {
        const actor = actorOf(principal, req);
        await assertWorkMayStart(db, 'corpus_run');
        const sweep = await db.governanceRun.create({
          data: {
            kind: CLEANUP_SWEEP_KIND,
            params: body,
            requestedBy: actor.userId,
            workflowId: CLEANUP_SWEEP_WORKFLOW_ID,
          },
        });
        const piiRun = body.do_pii
          ? await queueAgentRun(
              db,
              PII_BACKFILL_KIND,
              { session_ids: null, limit: body.pii_limit, scope: 'corpus' },
              actor.userId,
              `${CLEANUP_SWEEP_WORKFLOW_ID}-pii-${sweep.id}`,
            )
          : null;
        const { config } = deps;
        const started = await startWorkflowFor(deps, res, {
          workflow: cleanupSweepWorkflow,
          workflowId: CLEANUP_SWEEP_WORKFLOW_ID,
          args: [
            {
              governanceRunId: sweep.id,
              pii: piiRun && {
                runId: piiRun.id,
                taskQueue: config.temporal.cpuTaskQueue,
                heartbeatTimeoutSeconds: config.autolabel.heartbeatTimeoutSeconds,
                pageFrames: config.reanalyze.pageFrames,
                limit: body.pii_limit,
              },
            },
          ],
          location: piiRun ? `/api/agent/runs/${piiRun.id}` : `/api/govern/audit?subject_id=${sweep.id}`,
          what: 'a cleanup sweep',
          forget: async () => {
            if (piiRun) await db.agentRun.delete({ where: { id: piiRun.id } });
            await db.governanceRun.delete({ where: { id: sweep.id } });
          },
        });
        await recordAudit(db, {
          actorId: actor.userId,
          action: 'cleanup_sweep.started',
          subjectType: 'governance_run',
          subjectId: sweep.id,
          detail: { ...body, pii_run_id: piiRun?.id ?? null },
          requestId: actor.requestId,
        });
        const { run_id: workflowRunId, ...workflow } = started;
        return {
          sweep_id: sweep.id,
          status: 'running',
          params: body,
          pii_run_id: piiRun?.id ?? null,
          ...workflow,
          workflow_run_id: workflowRunId,
        };
      },
    );
}

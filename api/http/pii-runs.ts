import type { Response } from 'express';
import { z } from 'zod';
import { queueAgentRun } from '../../activities/agent-runs/runs';
import { assertWorkMayStart } from '../../activities/govern/start-guard';
import { forgetSpend, gateCorpusRun } from '../../activities/govern/spend';
import { PII_RECHECK_KIND, type PII_BACKFILL_KIND } from '../../activities/pii-recheck/recheck';
import type { PiiRunParams } from '../../activities/pii-recheck/runs';
import { emptyPiiTally } from '../../core/pii-recheck/tally';
import {
  PII_BACKFILL_WORKFLOW_ID,
  PII_RECHECK_WORKFLOW_ID,
  piiRunWorkflow,
} from '../../workflows/pii-recheck';
import type { AppDeps } from '../deps';
import type { Actor } from '../../activities/annotations/objects';
import { announceRunStarted } from './agent-runs';
import { startWorkflowFor } from './start-workflow';

/**
 * Starting a PII corpus run (docs/pii-recheck.md), shared by the `agent` group's re-check
 * (`POST /api/agent/reanalyze/all`) and the `autolabel` group's backfill
 * (`POST /api/autolabel/pii-backfill`): one revertible AgentRun, one workflow of each kind at a time.
 */

/** The body of both starts (the spec does not show it). */
export const PiiRunIn = z.strictObject({
  session_ids: z
    .array(z.uuid())
    .min(1)
    .max(500)
    .optional()
    .meta({ description: 'the sessions to go through; absent, the whole corpus' }),
  limit: z
    .int()
    .min(1)
    .max(1_000_000)
    .optional()
    .meta({ description: 'frames at most; absent, every frame that qualifies' }),
});

export async function startPiiRun(
  deps: AppDeps,
  res: Response,
  kind: typeof PII_RECHECK_KIND | typeof PII_BACKFILL_KIND,
  body: z.infer<typeof PiiRunIn>,
  actor: Actor,
) {
  const { db, config } = deps;
  await assertWorkMayStart(db, 'corpus_run');
  const recheck = kind === PII_RECHECK_KIND;
  const workflowId = recheck ? PII_RECHECK_WORKFLOW_ID : PII_BACKFILL_WORKFLOW_ID;
  const params: PiiRunParams = {
    session_ids: body.session_ids ? [...new Set(body.session_ids)] : null,
    limit: body.limit ?? null,
    scope: 'corpus',
  };
  const run = await queueAgentRun(db, kind, params, actor.userId, workflowId);
  const started = await startWorkflowFor(deps, res, {
    // The re-check holds the GPU slot and is priced like any corpus run; the backfill is CPU work.
    ...(recheck ? { check: () => gateCorpusRun(deps, run, params.session_ids) } : {}),
    workflow: piiRunWorkflow,
    workflowId,
    args: [
      {
        runId: run.id,
        // The re-check's pages hold the GPU slot; the backfill is the ingest's CPU pass.
        taskQueue: recheck ? config.temporal.gpuTaskQueue : config.temporal.cpuTaskQueue,
        heartbeatTimeoutSeconds: config.autolabel.heartbeatTimeoutSeconds,
        pageFrames: config.reanalyze.pageFrames,
        limit: params.limit,
        after: null,
        tally: emptyPiiTally(),
      },
    ],
    location: `/api/agent/runs/${run.id}`,
    what: recheck ? 'a PII re-check of the corpus' : 'a PII backfill',
    forget: async () => {
      await forgetSpend(db, run.id);
      await db.agentRun.delete({ where: { id: run.id } });
    },
  });
  return announceRunStarted(deps, run, started, actor, { params: { ...params } });
}

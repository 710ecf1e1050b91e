import { assertWorkMayStart } from '../../../activities/govern/start-guard';
import type { Response } from 'express';
import type { SlicingMode } from '../../../core/detect/tiling';
import { RefusedError, NotFoundError } from '../../../core/errors';
import { recordAudit } from '../../../activities/audit';
import { autolabelRefusal, createAutolabelJob } from '../../../activities/autolabel/jobs';
import type { RedetectCorpusParams } from '../../../activities/agent-runs/redetect-corpus';
import { agentRunOut } from '../../../activities/agent-runs/runs';
import type { Prisma } from '../../../generated/prisma/client';
import { autoLabelWorkflow, type AutolabelWorkflowInput } from '../../../workflows/autolabel';
import { REDETECT_CORPUS_WORKFLOW_ID, redetectCorpusWorkflow } from '../../../workflows/redetect-corpus';
import type { AppDeps } from '../../deps';
import { startWorkflow } from '../../http/start-workflow';
import { forgetSpend, gateCorpusRun } from '../../../activities/govern/spend';
import { COMPUTE_TARGETS } from './validators';

export function checkComputeTarget(target: string): void {
  if (!(COMPUTE_TARGETS as readonly string[]).includes(target)) {
    throw new RefusedError(
      `compute target ${JSON.stringify(target)} is not available: auto-label runs on ${COMPUTE_TARGETS.join(', ')} (the cloud connection is not part of this deployment)`,
    );
  }
}

/**
 * Creates the job row and starts AutoLabelWorkflow under `autolabel-<session_id>`; when the start
 * fails (already running: 409) the row is removed again, so no job exists without its workflow.
 */
export async function startAutolabel(
  deps: AppDeps,
  res: Response,
  opts: {
    sessionId: string;
    mode: 'autolabel' | 'redetect';
    computeTarget: string;
    limit: number | null;
    onlyUnlabelled: boolean;
    slicing?: SlicingMode;
    actorId: string;
    requestId: string;
  },
) {
  await assertWorkMayStart(deps.db, 'autolabel');
  const refused = await autolabelRefusal(deps.db, opts.sessionId);
  if (refused)
    throw refused.status === 404 ? new NotFoundError(refused.reason) : new RefusedError(refused.reason);
  const a = deps.config.autolabel;
  const job = await createAutolabelJob(deps.db, deps.config, opts);
  const workflowId = job.workflowId;
  const location = `/api/autolabel/${job.id}`;
  const input: AutolabelWorkflowInput = {
    jobId: job.id,
    sessionId: opts.sessionId,
    gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
    heartbeatTimeoutSeconds: a.heartbeatTimeoutSeconds,
  };
  try {
    const started = await startWorkflow(deps, res, {
      workflow: autoLabelWorkflow,
      workflowId,
      args: [input],
      location,
      what: `auto-label of session ${opts.sessionId}`,
    });
    await recordAudit(deps.db, {
      actorId: opts.actorId,
      action: `autolabel.${opts.mode}.started`,
      subjectType: 'session',
      subjectId: opts.sessionId,
      detail: { job_id: job.id, limit: opts.limit, only_unlabelled: opts.onlyUnlabelled },
      requestId: opts.requestId,
    });
    return {
      job_id: job.id,
      session_id: opts.sessionId,
      mode: opts.mode,
      state: job.state,
      policy: job.policy,
      ...started,
    };
  } catch (err) {
    await deps.db.autolabelJob.delete({ where: { id: job.id } });
    throw err;
  }
}

/**
 * Starts the redetect-all corpus run: an AgentRun row, then `redetectCorpusWorkflow` under the one
 * id `redetect-all` (a second start while one runs is 409 and leaves no row). Listed sessions are
 * checked here, so a list of only refused sessions answers 422 with why; an unlisted corpus is
 * walked by the workflow, which records each session it skips.
 */
export async function startRedetectCorpus(
  deps: AppDeps,
  res: Response,
  opts: { sessionIds: string[] | null; computeTarget: string; actorId: string; requestId: string },
) {
  await assertWorkMayStart(deps.db, 'corpus_run');
  const skipped: Array<{ session_id: string; reason: string }> = [];
  let listed: string[] | null = null;
  if (opts.sessionIds) {
    listed = [];
    for (const sessionId of new Set(opts.sessionIds)) {
      const refused = await autolabelRefusal(deps.db, sessionId);
      if (refused) skipped.push({ session_id: sessionId, reason: refused.reason });
      else listed.push(sessionId);
    }
    if (listed.length === 0)
      throw new RefusedError(`no session could be redetected: ${skipped.map((s) => s.reason).join('; ')}`, {
        skipped,
      });
  }
  const params: RedetectCorpusParams = { session_ids: listed, compute_target: opts.computeTarget };
  const run = await deps.db.agentRun.create({
    data: {
      kind: 'redetect-all',
      params: params as unknown as Prisma.InputJsonValue,
      workflowId: REDETECT_CORPUS_WORKFLOW_ID,
      createdBy: opts.actorId,
      changes: {},
      sessions: {
        create: skipped.map((s) => ({ sessionId: s.session_id, outcome: 'skipped', reason: s.reason })),
      },
    },
  });
  try {
    await gateCorpusRun(deps, run, listed);
    const started = await startWorkflow(deps, res, {
      workflow: redetectCorpusWorkflow,
      workflowId: REDETECT_CORPUS_WORKFLOW_ID,
      args: [
        {
          runId: run.id,
          after: null,
          pageSize: deps.config.autolabel.corpusPageSize,
          gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
          heartbeatTimeoutSeconds: deps.config.autolabel.heartbeatTimeoutSeconds,
        },
      ],
      location: `/api/agent/runs/${run.id}`,
      what: 'a redetect-all run',
    });
    await recordAudit(deps.db, {
      actorId: opts.actorId,
      action: 'autolabel.redetect_all.started',
      subjectType: 'agent_run',
      subjectId: run.id,
      detail: { ...params, skipped: skipped.length },
      requestId: opts.requestId,
    });
    await deps.events.publish('jobs', 'agent.run.started', agentRunOut(run));
    // `run_id` is the AgentRun's; the workflow's own run id is `workflow_run_id`.
    const { run_id: workflowRunId, ...workflow } = started;
    return {
      ...agentRunOut(run),
      ...workflow,
      workflow_run_id: workflowRunId,
      events_url: '/api/events/jobs',
      skipped,
    };
  } catch (err) {
    await forgetSpend(deps.db, run.id);
    await deps.db.agentRun.delete({ where: { id: run.id } });
    throw err;
  }
}

import type { Response } from 'express';
import { RefusedError, NotFoundError } from '../../../core/errors';
import { resolvePolicy } from '../../../core/routing';
import { readGate } from '../../../activities/inspector/gate-store';
import { recordAudit } from '../../../activities/audit';
import { routingDefaults } from '../../../activities/autolabel/threshold-fits';
import type { Prisma } from '../../../generated/prisma/client';
import type { AutolabelWorkflowInput } from '../../../workflows/autolabel';
import type { AppDeps } from '../../deps';
import { startWorkflow } from '../../http/start-workflow';
import { COMPUTE_TARGETS } from './validators';

export const autolabelWorkflowId = (sessionId: string): string => `autolabel-${sessionId}`;

export function checkComputeTarget(target: string): void {
  if (!(COMPUTE_TARGETS as readonly string[]).includes(target)) {
    throw new RefusedError(
      `compute target ${JSON.stringify(target)} is not available: auto-label runs on ${COMPUTE_TARGETS.join(', ')} (the cloud connection is not part of this deployment)`,
    );
  }
}

/** Why a session cannot be auto-labelled now, or null: unknown, quarantined, or without frames. */
export async function refusal(
  deps: AppDeps,
  sessionId: string,
): Promise<{ status: 404 | 422; reason: string } | null> {
  const session = await deps.db.session.findUnique({
    where: { id: sessionId },
    select: { id: true, quarantined: true },
  });
  if (!session) return { status: 404, reason: `no session ${sessionId}` };
  const gate = await readGate(deps.db, sessionId);
  if (gate.quarantined || session.quarantined) {
    const by =
      gate.decidedBy === 'override'
        ? `an admin override (${gate.override?.reason ?? 'no reason given'})`
        : `its health check (score ${gate.row?.score.toFixed(2) ?? 'n/a'})`;
    return {
      status: 422,
      reason: `session ${sessionId} is quarantined by ${by}; auto-label is refused until the quarantine is lifted`,
    };
  }
  if ((await deps.db.frame.count({ where: { sessionId } })) === 0)
    return { status: 422, reason: `session ${sessionId} has no frames to label` };
  return null;
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
    actorId: string;
    requestId: string;
  },
) {
  const refused = await refusal(deps, opts.sessionId);
  if (refused)
    throw refused.status === 404 ? new NotFoundError(refused.reason) : new RefusedError(refused.reason);
  const a = deps.config.autolabel;
  // The configured policy, or the active threshold fit's; the job keeps what it started with.
  const policy = resolvePolicy({}, await routingDefaults(deps.db, deps.config));
  const workflowId = autolabelWorkflowId(opts.sessionId);
  const job = await deps.db.autolabelJob.create({
    data: {
      sessionId: opts.sessionId,
      workflowId,
      mode: opts.mode,
      computeTarget: opts.computeTarget,
      limit: opts.limit,
      onlyUnlabelled: opts.onlyUnlabelled,
      policy: { ...policy } as Prisma.InputJsonValue,
      createdBy: opts.actorId,
    },
  });
  const location = `/api/autolabel/${job.id}`;
  const input: AutolabelWorkflowInput = {
    jobId: job.id,
    sessionId: opts.sessionId,
    gpuTaskQueue: deps.config.temporal.gpuTaskQueue,
    heartbeatTimeoutSeconds: a.heartbeatTimeoutSeconds,
  };
  try {
    const started = await startWorkflow(deps, res, {
      workflowType: 'autoLabelWorkflow',
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
      policy,
      ...started,
    };
  } catch (err) {
    await deps.db.autolabelJob.delete({ where: { id: job.id } });
    throw err;
  }
}

import type { Response } from 'express';
import { recordAudit } from '../../activities/audit';
import { autolabelRefusal } from '../../activities/autolabel/jobs';
import {
  flywheelGold,
  flywheelRunLocation,
  flywheelRunOut,
  flywheelWorkflowId,
  type FlywheelParams,
} from '../../activities/flywheel/runs';
import { assertWorkMayStart } from '../../activities/govern/start-guard';
import { NotFoundError, RefusedError } from '../../core/errors';
import { initialStages, STAGES_OF, type FlywheelKind } from '../../core/flywheel/stages';
import type { Prisma } from '../../generated/prisma/client';
import { flywheelWorkflow } from '../../workflows/flywheel';
import type { AppDeps } from '../deps';
import { beginWorkflow } from './start-workflow';

export interface FlywheelStart {
  kind: FlywheelKind;
  sessionId: string | null;
  request: { gold_id: string | null; training_epochs: number; relabel?: boolean; wait_for_review?: boolean };
  actor: { userId: string; requestId: string };
}

/**
 * Refusals a session run can know before it starts: no such session, a failed ingest, and — when
 * its auto-label stage will run rather than reuse a job — what auto-label refuses (quarantine, no
 * frames). A session still being ingested is not refused: the run waits for it.
 */
async function checkSession(deps: AppDeps, sessionId: string, relabel: boolean) {
  const session = await deps.db.session.findUnique({ where: { id: sessionId } });
  if (!session) throw new NotFoundError(`no session ${sessionId}`);
  if (session.state === 'failed')
    throw new RefusedError(`session ${sessionId}'s ingest failed: ${session.error ?? 'no reason recorded'}`);
  const reusable =
    !relabel && (await deps.db.autolabelJob.count({ where: { sessionId, state: 'completed' } })) > 0;
  if (reusable || session.state !== 'ready') return;
  const refused = await autolabelRefusal(deps.db, sessionId);
  if (refused) throw new RefusedError(refused.reason);
}

/**
 * The one way a flywheel run starts (a session's run, an agent's training cycle, the flywheel
 * agent): the kill switch, the run's refusals, its row, workflow flywheel-session-<session_id> or
 * training-cycle-<run_id>, the audit entry. A start that fails (already running: 409) removes the
 * row again. The answer's `status_url` is the run's Location.
 */
export async function startFlywheelRun(deps: AppDeps, start: FlywheelStart) {
  const { db, config } = deps;
  await assertWorkMayStart(db, 'flywheel');
  if (start.sessionId) await checkSession(deps, start.sessionId, start.request.relabel ?? false);
  const gold = await flywheelGold(db, start.request.gold_id);
  const params: FlywheelParams = {
    gold_id: gold.id,
    relabel: start.request.relabel ?? false,
    wait_for_review: start.request.wait_for_review ?? false,
    training_epochs: start.request.training_epochs,
  };
  const id = crypto.randomUUID();
  const workflowId = flywheelWorkflowId(start.kind, id, start.sessionId);
  const run = await db.flywheelRun.create({
    data: {
      id,
      kind: start.kind,
      sessionId: start.sessionId,
      params: params as unknown as Prisma.InputJsonValue,
      stage: STAGES_OF[start.kind][0]!,
      stages: initialStages(start.kind) as unknown as Prisma.InputJsonValue,
      workflowId,
      createdBy: start.actor.userId,
    },
  });
  const location = flywheelRunLocation(run.id);
  let started;
  try {
    started = await beginWorkflow(deps, {
      workflow: flywheelWorkflow,
      workflowId,
      args: [
        {
          runId: run.id,
          kind: start.kind,
          sessionId: start.sessionId,
          gpuTaskQueue: config.temporal.gpuTaskQueue,
          gpuHeartbeatSeconds: config.autolabel.heartbeatTimeoutSeconds,
          trainingHeartbeatSeconds: config.training.heartbeatTimeoutSeconds,
          exportHeartbeatSeconds: config.export.heartbeatTimeoutSeconds,
          pollSeconds: config.flywheel.pollSeconds,
          waitForReview: params.wait_for_review,
        },
      ],
      what: start.kind === 'session' ? `a flywheel run of session ${start.sessionId}` : 'a training cycle',
    });
  } catch (err) {
    await db.flywheelRun.delete({ where: { id: run.id } });
    throw err;
  }
  await recordAudit(db, {
    actorId: start.actor.userId,
    action: 'flywheel.started',
    subjectType: 'flywheel_run',
    subjectId: run.id,
    detail: { kind: start.kind, session_id: start.sessionId, ...params },
    requestId: start.actor.requestId,
  });
  await deps.events.publish('jobs', 'flywheel.started', flywheelRunOut(run));
  // `run_id` is the flywheel run's; the workflow's own run id is `workflow_run_id`.
  return {
    ...flywheelRunOut(run),
    workflow_id: started.workflow_id,
    workflow_run_id: started.run_id,
    status_url: location,
    events_url: '/api/events/jobs',
  };
}

/** Starts a run for a route: 202 with the run's stages as Location. */
export async function answerFlywheelStart(deps: AppDeps, res: Response, start: FlywheelStart) {
  const started = await startFlywheelRun(deps, start);
  res.status(202).location(started.status_url);
  return started;
}

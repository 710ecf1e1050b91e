import type { AppConfig } from '../../core/config';
import { SLICING_MODES, type SlicingMode } from '../../core/detect/tiling';
import { resolvePolicy } from '../../core/routing';
import type { AutolabelJob, Prisma } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import type { Db } from '../db';
import { recordAudit } from '../audit';
import { emitJobEvent } from '../events/jobs';
import { readGate } from '../inspector/gate-store';
import { routingDefaults } from './threshold-fits';

export const autolabelWorkflowId = (sessionId: string): string => `autolabel-${sessionId}`;

/** Why a session cannot be auto-labelled now, or null: unknown, quarantined, or without frames. */
export async function autolabelRefusal(
  db: Db,
  sessionId: string,
): Promise<{ status: 404 | 422; reason: string } | null> {
  const session = await db.session.findUnique({
    where: { id: sessionId },
    select: { id: true, quarantined: true },
  });
  if (!session) return { status: 404, reason: `no session ${sessionId}` };
  const gate = await readGate(db, sessionId);
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
  if ((await db.frame.count({ where: { sessionId } })) === 0)
    return { status: 422, reason: `session ${sessionId} has no frames to label` };
  return null;
}

export interface NewAutolabelJob {
  sessionId: string;
  mode: 'autolabel' | 'redetect';
  computeTarget: string;
  limit: number | null;
  onlyUnlabelled: boolean;
  /** The job's slicing mode when it overrides the configured one. */
  slicing?: SlicingMode;
  actorId: string | null;
  /** The corpus run the job belongs to: its replaced objects are kept for that run's revert. */
  agentRunId?: string;
}

/** A job row for `autolabel-<session_id>`, with the routing policy it starts with (the configured one, or the active threshold fit's). */
export async function createAutolabelJob(
  db: Db,
  config: Pick<AppConfig, 'autolabel'>,
  job: NewAutolabelJob,
): Promise<AutolabelJob> {
  const policy = resolvePolicy({}, await routingDefaults(db, config));
  return db.autolabelJob.create({
    data: {
      sessionId: job.sessionId,
      workflowId: autolabelWorkflowId(job.sessionId),
      mode: job.mode,
      computeTarget: job.computeTarget,
      limit: job.limit,
      onlyUnlabelled: job.onlyUnlabelled,
      // A slicing override rides in the policy: how this job labels, shown with the job.
      policy: {
        ...policy,
        ...(job.slicing ? { slicing: job.slicing } : {}),
      } as unknown as Prisma.InputJsonValue,
      createdBy: job.actorId,
      agentRunId: job.agentRunId ?? null,
    },
  });
}

/** The job's slicing override, or undefined for the configured mode. */
export function jobSlicing(job: Pick<AutolabelJob, 'policy'>): SlicingMode | undefined {
  const mode = (job.policy as { slicing?: unknown } | null)?.slicing;
  return SLICING_MODES.find((m) => m === mode);
}

/** A job as GET /api/autolabel/{job_id} and the jobs event stream show it. */
export function jobOut(job: AutolabelJob) {
  const planned = job.framesPlanned;
  return {
    job_id: job.id,
    session_id: job.sessionId,
    workflow_id: job.workflowId,
    mode: job.mode,
    state: job.state,
    compute_target: job.computeTarget,
    only_unlabelled: job.onlyUnlabelled,
    limit: job.limit,
    policy: job.policy,
    frames_planned: planned,
    frames_done: job.framesDone,
    last_frame_index: job.lastFrameIndex,
    progress: job.state === 'completed' ? 1 : planned ? Math.min(0.99, job.framesDone / planned) : 0,
    objects_created: job.objectsCreated,
    objects_deleted: job.objectsDeleted,
    tally: job.tally,
    /** Models of the paths that ran (closed_set: file@sha256 prefix). */
    models: job.paths,
    attempts: job.attempts,
    resumed_from: job.resumedFrom,
    error: job.error,
    created_by: job.createdBy,
    created_at: job.createdAt.toISOString(),
    started_at: job.startedAt?.toISOString() ?? null,
    finished_at: job.finishedAt?.toISOString() ?? null,
  };
}

/** Job bookkeeping that runs on the `cpu` queue (it must work while the GPU slot is busy). */
export function createAutolabelJobActivities(deps: ActivityDeps) {
  return {
    async failAutolabelJob(input: { jobId: string; error: string }): Promise<void> {
      const job = await deps.db.autolabelJob.update({
        where: { id: input.jobId },
        data: { state: 'failed', error: input.error, finishedAt: new Date() },
      });
      await recordAudit(deps.db, {
        actorId: null,
        action: 'autolabel.failed',
        subjectType: 'session',
        subjectId: job.sessionId,
        detail: { job_id: job.id, error: input.error },
      });
      await emitJobEvent(
        deps.db,
        { kind: 'autolabel', id: job.id, startedBy: job.createdBy },
        { kind: 'job.failed', reason: input.error },
      );
      await deps.events.publish('jobs', 'autolabel.failed', jobOut(job));
    },
  };
}

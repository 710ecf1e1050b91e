import { ScheduleAlreadyRunning, type Client, type ScheduleOptions } from '@temporalio/client';
import type { Logger } from 'pino';
import type { AppConfig } from '../../core/config';
import { eraseWorkflowId } from '../../core/govern/erasure';
import {
  ALREADY_ERASING,
  planSweep,
  retentionScheduleSpec,
  RETENTION_SCHEDULE_ID,
  type DueSession,
  type SweepPlan,
} from '../../core/govern/retention';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { erasurePreview, openErasure, sessionBusy } from './erasure';

/** Sessions whose retention_until has passed, oldest first, each with what blocks its erasure. */
export async function dueSessions(
  db: Db,
  now: Date,
  limit: number,
): Promise<{ total: number; sessions: DueSession[] }> {
  const where = { retentionUntil: { lt: now } };
  const [total, rows] = await Promise.all([
    db.session.count({ where }),
    db.session.findMany({ where, orderBy: [{ retentionUntil: 'asc' }, { id: 'asc' }], take: limit }),
  ]);
  const erasing = new Set(
    (
      await db.erasure.findMany({
        where: { sessionId: { in: rows.map((r) => r.id) }, status: 'running' },
        select: { sessionId: true },
      })
    ).map((e) => e.sessionId),
  );
  const sessions: DueSession[] = [];
  for (const r of rows)
    sessions.push({
      id: r.id,
      name: r.name,
      retentionUntil: r.retentionUntil!,
      busy: await sessionBusy(db, r.id),
      erasing: erasing.has(r.id),
    });
  return { total, sessions };
}

/** The due sessions with what erasing each would delete, and the plan a sweep would follow. */
export async function retentionPlan(db: Db, now: Date, limit: number) {
  const due = await dueSessions(db, now, limit);
  const preview = await erasurePreview(
    db,
    due.sessions.map((s) => s.id),
  );
  const plan: SweepPlan = planSweep(due.sessions, limit);
  return {
    total_due: due.total,
    sessions: due.sessions.map((s) => ({
      session_id: s.id,
      name: s.name,
      retention_until: s.retentionUntil.toISOString(),
      would_delete: preview.get(s.id) ?? null,
      blocked_by: s.busy ?? (s.erasing ? ALREADY_ERASING : null),
    })),
    plan,
  };
}

/** A retention sweep as the routes show it. */
export function sweepOut(r: Prisma.GovernanceRunGetPayload<object>) {
  return {
    sweep_id: r.id,
    status: r.status,
    dry_run: r.dryRun,
    params: r.params,
    result: r.result,
    workflow_id: r.workflowId,
    error: r.error,
    requested_by: r.requestedBy,
    created_at: r.createdAt.toISOString(),
    finished_at: r.finishedAt?.toISOString() ?? null,
  };
}

/**
 * Keeps the `retention-sweep` schedule as configured (docs/erasure.md): created when missing,
 * otherwise updated to the configured spec, and paused when retention.enabled is off. Every cpu
 * worker calls it at start-up; the last to start wins, and all read the same configuration.
 * Started by type name: activities do not import workflows.
 */
export async function ensureRetentionSchedule(
  client: Client,
  config: AppConfig,
  logger?: Logger,
): Promise<void> {
  const spec = retentionScheduleSpec(config.retention.schedule);
  const note = config.retention.enabled
    ? 'retention sweep (APP_RETENTION__SCHEDULE)'
    : 'disabled by APP_RETENTION__ENABLED';
  const options: ScheduleOptions = {
    scheduleId: RETENTION_SCHEDULE_ID,
    spec,
    action: {
      type: 'startWorkflow',
      workflowType: 'retentionSweepWorkflow',
      workflowId: RETENTION_SCHEDULE_ID,
      taskQueue: config.temporal.cpuTaskQueue,
      args: [{ runId: null, actorId: null }],
    },
    // A sweep still running when the next is due: the next is skipped, the running one finishes.
    policies: { overlap: 'SKIP', catchupWindow: '1 day' },
    state: { paused: !config.retention.enabled, note },
  };
  try {
    await client.schedule.create(options);
  } catch (err) {
    if (!(err instanceof ScheduleAlreadyRunning)) throw err;
    const handle = client.schedule.getHandle(RETENTION_SCHEDULE_ID);
    await handle.update((prev) => ({ ...prev, spec, action: options.action, policies: options.policies }));
    const paused = (await handle.describe()).state.paused;
    if (paused && config.retention.enabled) await handle.unpause(note);
    if (!paused && !config.retention.enabled) await handle.pause(note);
  }
  logger?.info(
    { schedule: config.retention.schedule, enabled: config.retention.enabled },
    'retention schedule in place',
  );
}

/** The activities of RetentionSweepWorkflow, on the `cpu` queue (its EraseSessionWorkflows use the erasure's). */
export function createRetentionActivities(deps: ActivityDeps) {
  const { db, config } = deps;
  return {
    /** Records a scheduled sweep's run (a manual one is recorded by its route). */
    beginRetentionSweep: async (input: { workflowId: string }): Promise<string> => {
      const run = await db.governanceRun.create({
        data: {
          kind: 'retention-sweep',
          dryRun: false,
          workflowId: input.workflowId,
          params: { trigger: 'schedule', limit: config.retention.sweepLimit },
        },
      });
      return run.id;
    },

    /** The sessions this sweep erases and those it skips (why), as of now. */
    planRetentionSweep: async (input: { runId: string }): Promise<SweepPlan> => {
      const { plan, total_due } = await retentionPlan(db, new Date(), config.retention.sweepLimit);
      await db.governanceRun.update({
        where: { id: input.runId },
        data: { result: { total_due, planned: plan.erase.length, skipped: plan.skip } },
      });
      return plan;
    },

    /** Opens the erasure of one due session, unless it has gone, become busy or is being erased meanwhile. */
    openSweepErasure: async (input: {
      runId: string;
      sessionId: string;
    }): Promise<{ erasureId: string } | { skipped: string }> => {
      const run = await db.governanceRun.findUniqueOrThrow({ where: { id: input.runId } });
      const session = await db.session.findUnique({ where: { id: input.sessionId } });
      if (!session) return { skipped: 'the session no longer exists' };
      const busy = await sessionBusy(db, session.id);
      if (busy) return { skipped: busy };
      const open = await db.erasure.findFirst({ where: { sessionId: session.id, status: 'running' } });
      // A retried step finds the erasure it opened before (its workflow id is the session's).
      if (open)
        return open.requestedBy === run.requestedBy && open.reason === 'retention'
          ? { erasureId: open.id }
          : { skipped: ALREADY_ERASING };
      return {
        erasureId: await openErasure(db, {
          sessionId: session.id,
          sessionName: session.name,
          reason: 'retention',
          actorId: run.requestedBy,
          workflowId: eraseWorkflowId(session.id),
        }),
      };
    },

    /**
     * Ends the sweep's record. The erased sessions are named by their erasures only: a session id
     * written here after its erasure's proof would be a trace the proof never saw.
     */
    finishRetentionSweep: async (input: {
      runId: string;
      status: 'completed' | 'failed';
      erased?: Array<{ erasure_id: string; outcome: 'completed' | 'failed'; reason?: string }>;
      skipped?: Array<{ erasure_id?: string; session_id?: string; reason: string }>;
      error?: string;
    }): Promise<void> => {
      const run = await db.governanceRun.findUniqueOrThrow({ where: { id: input.runId } });
      const result = {
        ...(run.result as Prisma.JsonObject),
        erased: input.erased ?? [],
        ...(input.skipped?.length ? { skipped_late: input.skipped } : {}),
      };
      await db.governanceRun.update({
        where: { id: input.runId },
        data: { status: input.status, result, error: input.error ?? null, finishedAt: new Date() },
      });
      await recordAudit(db, {
        actorId: run.requestedBy,
        action: `retention.sweep_${input.status}`,
        subjectType: 'governance_run',
        subjectId: run.id,
        detail: { erasures: (input.erased ?? []).map((e) => e.erasure_id), error: input.error ?? null },
      });
    },
  };
}

import { RefusedError } from '../../core/errors';
import type { AgentRun, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { recordAudit } from '../audit';
import { recordActualSpend } from '../govern/spend';

/**
 * A run's states (docs/agent-runs.md); `cancelled` is written by the jobs route (docs/jobs.md).
 * Only a finished run can be reverted, and only once.
 */
export type AgentRunStatus =
  'running' | 'completed' | 'failed' | 'cancelled' | 'reverting' | 'reverted' | 'revert_failed';
export const REVERTIBLE: readonly AgentRunStatus[] = ['completed', 'failed', 'cancelled', 'revert_failed'];

/** What a revert did, kept in the run's summary. */
export interface RevertTally {
  frames: number;
  objects_restored: number;
  objects_removed: number;
  /** Objects the run made that a person has since reviewed (source `human`): kept, not removed. */
  kept_human_edited: number;
  /** Frames a later auto-label labelled again: left as they are, nothing restored on them. */
  superseded_frames: number;
}

export const emptyRevertTally = (): RevertTally => ({
  frames: 0,
  objects_restored: 0,
  objects_removed: 0,
  kept_human_edited: 0,
  superseded_frames: 0,
});

/** The run's `changes`: what it did, session by session and in objects, and what its revert did. */
export interface AgentRunSummary {
  sessions: { completed: number; failed: number; skipped: number };
  frames: number;
  objects_replaced: number;
  objects_created: number;
  reverted: RevertTally | null;
}

/** Recomputes a corpus run's summary from its ledger and its jobs (idempotent, so a retried step cannot count twice). */
export async function summariseRun(db: Db, runId: string): Promise<AgentRunSummary> {
  const [outcomes, jobs, run] = await Promise.all([
    db.agentRunSession.groupBy({ by: ['outcome'], where: { runId }, _count: true }),
    db.autolabelJob.aggregate({
      where: { agentRunId: runId },
      _sum: { framesDone: true, objectsCreated: true, objectsDeleted: true },
    }),
    db.agentRun.findUniqueOrThrow({ where: { id: runId }, select: { changes: true } }),
  ]);
  const count = (o: string) => outcomes.find((x) => x.outcome === o)?._count ?? 0;
  return {
    sessions: { completed: count('completed'), failed: count('failed'), skipped: count('skipped') },
    frames: jobs._sum.framesDone ?? 0,
    objects_replaced: jobs._sum.objectsDeleted ?? 0,
    objects_created: jobs._sum.objectsCreated ?? 0,
    reverted: (run.changes as Partial<AgentRunSummary> | null)?.reverted ?? null,
  };
}

/** Sessions a run could not label, with why (the newest first, at most `take`). */
export const notLabelled = (db: Db, runId: string, take = 100) =>
  db.agentRunSession.findMany({
    where: { runId, outcome: { not: 'completed' } },
    orderBy: { finishedAt: 'desc' },
    take,
  });

/** A run as GET /api/agent/runs/{run_id} and the jobs stream show it. */
export function agentRunOut(
  run: AgentRun,
  notDone: Array<{ sessionId: string; jobId: string | null; outcome: string; reason: string | null }> = [],
) {
  return {
    run_id: run.id,
    kind: run.kind,
    status: run.status as AgentRunStatus,
    params: run.params,
    changes: run.changes,
    workflow_id: run.workflowId,
    error: run.error,
    revertible: (REVERTIBLE as readonly string[]).includes(run.status),
    not_labelled: notDone.map((s) => ({
      session_id: s.sessionId,
      job_id: s.jobId,
      outcome: s.outcome,
      reason: s.reason,
    })),
    created_by: run.createdBy,
    created_at: run.createdAt.toISOString(),
    finished_at: run.finishedAt?.toISOString() ?? null,
    reverted_at: run.revertedAt?.toISOString() ?? null,
  };
}

/**
 * Records a run (running) of `kind` with what it was asked; the sessions it names must exist, so
 * a typo is a 422 before anything runs.
 */
export async function queueAgentRun<P extends { session_ids: string[] | null }>(
  db: Db,
  kind: string,
  params: P,
  actorId: string | null,
  workflowId: string | null,
) {
  if (params.session_ids) {
    const found = await db.session.count({ where: { id: { in: params.session_ids } } });
    if (found !== new Set(params.session_ids).size)
      throw new RefusedError(`some listed sessions do not exist: ${params.session_ids.join(', ')}`);
  }
  return db.agentRun.create({
    data: { kind, params: params as unknown as Prisma.InputJsonValue, createdBy: actorId, workflowId },
  });
}

/** Ends a run with its summary: status, audit, and `agent.run.completed|failed` on the jobs stream. */
export async function settleAgentRun(
  deps: Pick<ActivityDeps, 'db' | 'events'>,
  input: { runId: string; status: 'completed' | 'failed'; error?: string | undefined },
  changes: unknown,
): Promise<void> {
  const run = await deps.db.agentRun.update({
    where: { id: input.runId },
    data: {
      status: input.status,
      error: input.error ?? null,
      finishedAt: new Date(),
      changes: changes as Prisma.InputJsonValue,
    },
  });
  await recordActualSpend(deps.db, 'corpus_run', run.id);
  await recordAudit(deps.db, {
    actorId: null,
    action: `agent_run.${input.status}`,
    subjectType: 'agent_run',
    subjectId: run.id,
    detail: { kind: run.kind, error: input.error ?? null, changes } as Prisma.InputJsonValue,
  });
  await deps.events.publish('jobs', `agent.run.${input.status}`, agentRunOut(run));
}

export function createAgentRunActivities(deps: ActivityDeps) {
  const { db } = deps;
  return {
    /** Ends a run: its summary, its status, the audit and the jobs stream (`agent.run.completed|failed`). */
    async finishAgentRun(input: { runId: string; status: 'completed' | 'failed'; error?: string }) {
      await settleAgentRun(deps, input, await summariseRun(db, input.runId));
    },
  };
}

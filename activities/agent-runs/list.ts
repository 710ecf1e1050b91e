import { WorkflowNotFoundError, type Client } from '@temporalio/client';
import { decodeCursor, encodeCursor } from '../../core/pagination';
import { Prisma, type AgentRun } from '../../generated/prisma/client';
import type { Db } from '../db';
import { revertWorkflowId } from './revert';
import { agentRunOut } from './runs';

/** A page of runs, newest first, by keyset on (created_at, id); filters combine with AND. */
export async function listAgentRuns(
  db: Db,
  query: {
    kinds?: readonly string[] | undefined;
    status?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const conds: Prisma.Sql[] = [];
  if (query.kinds) conds.push(Prisma.sql`kind = ANY(${[...query.kinds]}::text[])`);
  if (query.status) conds.push(Prisma.sql`status = ${query.status}`);
  if (query.cursor) {
    const after = decodeCursor(query.cursor);
    conds.push(Prisma.sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
  }
  // The key is read as text with microseconds: a Date would round it to milliseconds.
  const keys = await db.$queryRaw<Array<{ id: string; key_at: string }>>`
    SELECT id::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM agent_runs
     ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}
     ORDER BY created_at DESC, id DESC
     LIMIT ${query.limit + 1}`;
  const page = keys.slice(0, query.limit);
  const rows = new Map(
    (await db.agentRun.findMany({ where: { id: { in: page.map((k) => k.id) } } })).map((r) => [r.id, r]),
  );
  const last = page.at(-1);
  return {
    items: page.flatMap((k) => (rows.has(k.id) ? [agentRunOut(rows.get(k.id)!)] : [])),
    limit: query.limit,
    next_cursor:
      keys.length > query.limit && last ? encodeCursor({ createdAt: last.key_at, id: last.id }) : null,
  };
}

/** How long a run without a workflow (one frame, applied inside its request) may stay `running` before it counts as interrupted. */
export const REQUEST_RUN_GRACE_MS = 10 * 60_000;
/** How long a run may wait for its workflow to start. */
const START_GRACE_MS = 30_000;
/** Runs looked at per call: the newest unfinished ones. */
const INTERRUPTED_SCAN = 500;

export interface InterruptedRun {
  run: AgentRun;
  /** What the run's workflow is now: its Temporal status, NOT_FOUND, SUPERSEDED or NO_WORKFLOW. */
  workflow_status: string;
  reason: string;
}

/**
 * Runs that say `running` or `reverting` while nothing runs them any more: their workflow closed
 * without settling them (terminated from the Temporal UI, timed out, its failure report lost) or
 * is gone; a later run started under the same one-at-a-time id (the id's workflow serves that
 * one); or a one-frame run whose request ended before it settled. Worker restarts do not make a
 * run interrupted: Temporal carries its workflow on.
 */
export async function findInterruptedRuns(db: Db, workflows: Client['workflow']): Promise<InterruptedRun[]> {
  const open = await db.agentRun.findMany({
    where: { status: { in: ['running', 'reverting'] } },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: INTERRUPTED_SCAN,
  });
  const newestRunning = new Map<string, string>();
  for (const r of open)
    if (r.status === 'running' && r.workflowId && !newestRunning.has(r.workflowId))
      newestRunning.set(r.workflowId, r.id);
  const found: InterruptedRun[] = [];
  for (const run of open) {
    const interruption = await interruptionOf(run, newestRunning, workflows);
    if (interruption) found.push({ run, ...interruption });
  }
  return found;
}

/** Why one run is interrupted, or null while something runs it (or it has finished). */
export async function runInterruption(
  db: Db,
  workflows: Client['workflow'],
  run: AgentRun,
): Promise<Omit<InterruptedRun, 'run'> | null> {
  if (run.status !== 'running' && run.status !== 'reverting') return null;
  const newest = run.workflowId
    ? await db.agentRun.findFirst({
        where: { workflowId: run.workflowId, status: 'running' },
        orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        select: { id: true },
      })
    : null;
  return interruptionOf(
    run,
    new Map(newest && run.workflowId ? [[run.workflowId, newest.id]] : []),
    workflows,
  );
}

async function interruptionOf(
  run: AgentRun,
  newestRunning: ReadonlyMap<string, string>,
  workflows: Client['workflow'],
): Promise<Omit<InterruptedRun, 'run'> | null> {
  const workflowId = run.status === 'reverting' ? revertWorkflowId(run.id) : run.workflowId;
  if (!workflowId)
    return Date.now() - run.updatedAt.getTime() > REQUEST_RUN_GRACE_MS
      ? { workflow_status: 'NO_WORKFLOW', reason: 'the request that applied it ended before it settled' }
      : null;
  if (run.status === 'running' && newestRunning.get(workflowId) !== run.id)
    return { workflow_status: 'SUPERSEDED', reason: `a later run started under workflow ${workflowId}` };
  const status = await workflowStatus(workflows, workflowId);
  // A run is recorded just before its workflow starts: a moment without one is not an interruption.
  if (status === 'NOT_FOUND' && Date.now() - run.updatedAt.getTime() < START_GRACE_MS) return null;
  if (status === 'RUNNING' || status === 'CONTINUED_AS_NEW') return null;
  return { workflow_status: status, reason: `its workflow ${workflowId} is ${status}` };
}

/** Where a run's walk stopped: the last frame its ledger holds (frames are walked in id order). */
export async function lastLedgerFrame(db: Db, runId: string): Promise<string | null> {
  const [row] = await db.$queryRaw<Array<{ id: string | null }>>`
    SELECT max(frame_id::text) AS id FROM agent_run_frames WHERE run_id = ${runId}::uuid`;
  return row?.id ?? null;
}

/** Objects a run wrote (its ledger's `created` ids): what a relabel moved, what a recall run queued. */
export async function ledgerObjectCount(db: Db, runId: string): Promise<number> {
  const [row] = await db.$queryRaw<Array<{ n: number }>>`
    SELECT COALESCE(sum(cardinality(created)), 0)::int AS n FROM agent_run_frames WHERE run_id = ${runId}::uuid`;
  return row?.n ?? 0;
}

/** The sessions a run has recorded an outcome for. */
export async function sessionsRecorded(db: Db, runId: string): Promise<string[]> {
  return (await db.agentRunSession.findMany({ where: { runId }, select: { sessionId: true } })).map(
    (s) => s.sessionId,
  );
}

async function workflowStatus(workflows: Client['workflow'], workflowId: string): Promise<string> {
  try {
    // Without a run id the latest run of a chain is described: continued-as-new means it goes on.
    return (await workflows.getHandle(workflowId).describe()).status.name;
  } catch (err) {
    if (err instanceof WorkflowNotFoundError) return 'NOT_FOUND';
    throw err;
  }
}

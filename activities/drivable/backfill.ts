import { Context } from '@temporalio/activity';
import { RefusedError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import { settleAgentRun, type RevertTally } from '../agent-runs/runs';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { createRoadSegmenter } from './model';
import { modelRow, segmentStoredFrame } from './store';

export const DRIVABLE_BACKFILL_KIND = 'drivable-backfill';
export const DRIVABLE_BACKFILL_WORKFLOW_ID = 'drivable-backfill';

/** What a backfill was asked (AgentRun.params). */
export interface DrivableBackfillParams {
  session_ids: string[];
  /** Also replace areas the model made before (a newer model); human-drawn ones are never replaced. */
  replace_model: boolean;
}

/** The run's `changes`: sessions and frames, and what its revert did. */
export interface DrivableBackfillSummary {
  sessions: { completed: number; failed: number; skipped: number };
  frames: number;
  areas_created: number;
  areas_replaced: number;
  reverted: RevertTally | null;
}

/**
 * Records the run (an AgentRun of kind drivable-backfill) for the listed sessions that exist and
 * have frames; unknown or empty ones are skipped with the reason, and when none is left the
 * request is refused and nothing is recorded.
 */
export async function queueDrivableBackfill(db: Db, params: DrivableBackfillParams, actorId: string) {
  const found = await db.frame.groupBy({
    by: ['sessionId'],
    where: { sessionId: { in: params.session_ids } },
    _count: true,
  });
  const withFrames = new Set(found.map((f) => f.sessionId));
  const sessions = [...new Set(params.session_ids)];
  const skipped = sessions
    .filter((id) => !withFrames.has(id))
    .map((id) => ({ session_id: id, reason: 'no such session, or it has no frames' }));
  const kept = sessions.filter((id) => withFrames.has(id));
  if (kept.length === 0)
    throw new RefusedError(
      `no listed session can be backfilled: ${skipped.map((s) => `${s.session_id} (${s.reason})`).join(', ')}`,
    );
  const run = await db.agentRun.create({
    data: {
      kind: DRIVABLE_BACKFILL_KIND,
      params: { ...params, session_ids: kept } as unknown as Prisma.InputJsonValue,
      workflowId: DRIVABLE_BACKFILL_WORKFLOW_ID,
      createdBy: actorId,
    },
  });
  return { run, skipped };
}

async function summarise(db: Db, runId: string): Promise<DrivableBackfillSummary> {
  const [outcomes, frames, replaced, run] = await Promise.all([
    db.agentRunSession.groupBy({ by: ['outcome'], where: { runId }, _count: true }),
    db.agentRunFrame.count({ where: { runId } }),
    db.agentRunFrame.count({ where: { runId, NOT: { replaced: { equals: [] } } } }),
    db.agentRun.findUniqueOrThrow({ where: { id: runId }, select: { changes: true } }),
  ]);
  const count = (o: string) => outcomes.find((x) => x.outcome === o)?._count ?? 0;
  return {
    sessions: { completed: count('completed'), failed: count('failed'), skipped: count('skipped') },
    frames,
    areas_created: frames - replaced,
    areas_replaced: replaced,
    reverted: (run.changes as Partial<DrivableBackfillSummary> | null)?.reverted ?? null,
  };
}

/** The undo row of one frame, as the revert reads it. */
interface UndoFrame {
  frameId: string;
  replaced: Prisma.JsonValue;
}

/**
 * Undoes one frame of a backfill inside the revert's batch transaction: the area the run wrote goes
 * and the one it replaced (kept whole, to_jsonb) comes back with its version and timestamps. An
 * area a reviewer has edited since (source human) is kept; one a later write replaced (another run
 * or POST) is superseded and left alone. The shape is the object revert's, counted in areas.
 */
export async function revertDrivableFrame(tx: Prisma.TransactionClient, runId: string, f: UndoFrame) {
  const current = await tx.$queryRaw<Array<{ source: string; runId: string | null }>>`
    SELECT source, run_id::text AS "runId" FROM drivable_areas WHERE frame_id = ${f.frameId}::uuid FOR UPDATE`;
  const now = current[0];
  if (now && now.runId !== runId) return { superseded: true, restored: 0, removed: [], kept: 0 };
  if (now?.source === 'human') return { superseded: false, restored: 0, removed: [], kept: 1 };
  await tx.$executeRaw`DELETE FROM drivable_areas WHERE frame_id = ${f.frameId}::uuid`;
  const restored = await tx.$executeRaw`
    INSERT INTO drivable_areas
    SELECT (jsonb_populate_record(NULL::drivable_areas, x.v)).*
    FROM jsonb_array_elements(${JSON.stringify(f.replaced)}::jsonb) AS x(v)
    ON CONFLICT (frame_id) DO NOTHING`;
  // No blob belongs to an area: the removed count is all the object revert's tally needs.
  return { superseded: false, restored, removed: now ? [null] : [], kept: 0 };
}

/** Frames read per page of a session. */
const PAGE = 50;

/**
 * The backfill's steps, all on the `gpu` queue: the walk of a session holds the slot; the
 * bookkeeping steps are short and run after it (one factory, one worker to deploy).
 */
export function createDrivableActivities(deps: ActivityDeps) {
  const { db } = deps;
  const segmenter = createRoadSegmenter(deps.config.models);
  return {
    /**
     * Backfills one session's frames in index order; the heartbeat carries the last frame done, so
     * a retry resumes after it. Per frame, one transaction keeps the area it replaces (undo row)
     * and writes the new one with the run's id. Human-drawn areas are never touched.
     */
    async backfillDrivableSession(input: { runId: string; sessionId: string }): Promise<{ frames: number }> {
      const ctx = Context.current();
      const run = await db.agentRun.findUniqueOrThrow({ where: { id: input.runId } });
      const params = run.params as unknown as DrivableBackfillParams;
      let after = (ctx.info.heartbeatDetails as number | undefined) ?? -1;
      let frames = 0;
      for (;;) {
        const page = await db.frame.findMany({
          where: { sessionId: input.sessionId, index: { gt: after } },
          orderBy: { index: 'asc' },
          take: PAGE,
          include: { drivable: true },
        });
        for (const frame of page) {
          const old = frame.drivable;
          const skip = old && (old.source === 'human' || !params.replace_model || old.runId === input.runId);
          if (!skip) {
            const { shapes, modelVersion } = await segmentStoredFrame(deps.storage, segmenter, frame);
            await db.$transaction(async (tx) => {
              await tx.$executeRaw`
                INSERT INTO agent_run_frames (run_id, frame_id, job_id, created, replaced)
                SELECT ${input.runId}::uuid, ${frame.id}::uuid, ${input.runId}::uuid, '{}'::uuid[],
                  COALESCE((SELECT jsonb_agg(to_jsonb(d)) FROM drivable_areas d
                    WHERE d.frame_id = ${frame.id}::uuid AND d.source = 'model'), '[]'::jsonb)
                ON CONFLICT (run_id, frame_id) DO NOTHING`;
              const row = { ...modelRow(shapes, modelVersion), runId: input.runId, updatedBy: null };
              const changed = await tx.drivableArea.updateMany({
                where: { frameId: frame.id, source: 'model' },
                data: { ...row, version: { increment: 1 } },
              });
              if (changed.count === 0)
                await tx.drivableArea.createMany({
                  data: [{ frameId: frame.id, ...row }],
                  skipDuplicates: true,
                });
            });
            frames++;
          }
          after = frame.index;
          ctx.heartbeat(after);
        }
        if (page.length < PAGE) break;
      }
      await db.agentRunSession.upsert({
        where: { runId_sessionId: { runId: input.runId, sessionId: input.sessionId } },
        create: { runId: input.runId, sessionId: input.sessionId, jobId: null, outcome: 'completed' },
        update: { outcome: 'completed', reason: null },
      });
      return { frames };
    },

    /** A session the gpu step gave up on: recorded with why, and the walk goes on. */
    async failDrivableSession(input: { runId: string; sessionId: string; reason: string }) {
      await db.agentRunSession.upsert({
        where: { runId_sessionId: { runId: input.runId, sessionId: input.sessionId } },
        create: { ...input, jobId: null, outcome: 'failed' },
        update: { outcome: 'failed', reason: input.reason },
      });
    },

    /** Ends a backfill: its summary, status, audit and the jobs stream (`agent.run.completed|failed`). */
    async finishDrivableBackfill(input: { runId: string; status: 'completed' | 'failed'; error?: string }) {
      await settleAgentRun(deps, input, await summarise(db, input.runId));
    },
  };
}

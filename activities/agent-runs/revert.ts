import { Context } from '@temporalio/activity';
import { ConflictError, NotFoundError } from '../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { createMaskStore } from '../annotations/masks';
import { recordAudit } from '../audit';
import { DRIVABLE_BACKFILL_KIND, revertDrivableFrame } from '../drivable/backfill';
import { revertPiiFrame } from '../pii-recheck/frames';
import { PII_RUN_KINDS } from '../pii-recheck/recheck';
import { revertTrackRelabelFrame, TRACK_RELABEL_KIND } from '../tracks/relabel';
import { agentRunOut, emptyRevertTally, REVERTIBLE, type AgentRunSummary, type RevertTally } from './runs';

export const revertWorkflowId = (runId: string): string => `agent-run-revert-${runId}`;

/**
 * Moves a finished run to `reverting` (one conditional update, so two reverts cannot both start);
 * 404 for an unknown run, 409 for one still running, reverting or already reverted.
 */
export async function beginRevert(db: Db, runId: string) {
  const run = await db.agentRun.findUnique({ where: { id: runId } });
  if (!run) throw new NotFoundError(`no agent run ${runId}`);
  const claimed = await db.agentRun.updateMany({
    where: { id: runId, status: { in: [...REVERTIBLE] } },
    data: { status: 'reverting', error: null },
  });
  if (claimed.count === 0)
    throw new ConflictError(
      `agent run ${runId} is ${run.status}: only a ${REVERTIBLE.join(', ')} run can be reverted`,
    );
  return { run, previousStatus: run.status };
}

/** Frames reverted per transaction: small enough that a transaction stays short, large enough to be cheap. */
const FRAMES_PER_BATCH = 20;

interface UndoFrame {
  frameId: string;
  created: string[];
  replaced: Prisma.JsonValue;
  createdAt: Date;
}

/**
 * Undoes one frame inside the batch's transaction: the run's objects still machine-made go (with
 * their pending controls; provenance by cascade), and the objects it replaced come back exactly as
 * they were — the same rows of objects, provenance and pending controls (to_jsonb then
 * jsonb_populate_record), mask blobs kept by the run. A frame a later auto-label labelled again is
 * superseded and left alone; an object of the run a person has reviewed since is kept.
 */
async function revertFrame(tx: Prisma.TransactionClient, f: UndoFrame, machine: string) {
  const [{ superseded }] = (await tx.$queryRaw<Array<{ superseded: boolean }>>`
    SELECT EXISTS (
      SELECT 1 FROM objects WHERE frame_id = ${f.frameId}::uuid
        AND source IN (SELECT value FROM jsonb_array_elements_text(${machine}::jsonb))
        AND created_at > ${f.createdAt} AND NOT (id = ANY(${f.created}::uuid[]))
    ) AS superseded`) as [{ superseded: boolean }];
  if (superseded) return { superseded: true, restored: 0, removed: [] as Array<string | null>, kept: 0 };
  const mine = await tx.$queryRaw<Array<{ id: string; source: string; maskUri: string | null }>>`
    SELECT id::text, source, mask_uri AS "maskUri" FROM objects WHERE id = ANY(${f.created}::uuid[]) FOR UPDATE`;
  const machineSources = JSON.parse(machine) as string[];
  const remove = mine.filter((o) => machineSources.includes(o.source));
  const removeIds = remove.map((o) => o.id);
  await tx.$executeRaw`DELETE FROM control_samples WHERE object_id = ANY(${removeIds}::uuid[]) AND verdict IS NULL`;
  await tx.$executeRaw`DELETE FROM objects WHERE id = ANY(${removeIds}::uuid[])`;
  const replaced = JSON.stringify(f.replaced);
  // A track deleted since the run cannot be pointed at again; the object comes back without it.
  const restored = await tx.$executeRaw`
    INSERT INTO objects
    SELECT (jsonb_populate_record(NULL::objects,
      CASE WHEN x.v->'object'->>'track_id' IS NOT NULL
            AND NOT EXISTS (SELECT 1 FROM tracks t WHERE t.id = (x.v->'object'->>'track_id')::uuid)
           THEN jsonb_set(x.v->'object', '{track_id}', 'null') ELSE x.v->'object' END)).*
    FROM jsonb_array_elements(${replaced}::jsonb) AS x(v)
    ON CONFLICT (id) DO NOTHING`;
  await tx.$executeRaw`
    INSERT INTO provenance
    SELECT (jsonb_populate_record(NULL::provenance, p)).*
    FROM jsonb_array_elements(${replaced}::jsonb) AS x(v), jsonb_array_elements(x.v->'provenance') AS p
    ON CONFLICT (id) DO NOTHING`;
  await tx.$executeRaw`
    INSERT INTO control_samples
    SELECT (jsonb_populate_record(NULL::control_samples, c)).*
    FROM jsonb_array_elements(${replaced}::jsonb) AS x(v), jsonb_array_elements(x.v->'controls') AS c
    ON CONFLICT DO NOTHING`;
  // A run that changed objects in place (a relabel) removes rows whose masks the restored rows name.
  const restoredMasks = new Set(
    (f.replaced as Array<{ object?: { mask_uri?: string | null } }>).map((r) => r.object?.mask_uri ?? null),
  );
  return {
    superseded: false,
    restored,
    removed: remove.map((o) => (o.maskUri && restoredMasks.has(o.maskUri) ? null : o.maskUri)),
    kept: mine.length - remove.length,
  };
}

/** Reverting a run: on the `cpu` queue (database work only), one heartbeating activity. */
export function createRevertActivities(deps: ActivityDeps) {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  const machine = JSON.stringify(MACHINE_SOURCE_SPELLINGS);

  return {
    /**
     * Walks the run's undo rows in batches, each batch one transaction that also marks its frames
     * reverted and adds to the run's revert tally — so a retried attempt resumes with the frames
     * not yet reverted and counts nothing twice.
     */
    async revertAgentRun(input: { runId: string; actorId: string | null }): Promise<RevertTally> {
      const ctx = Context.current();
      const { kind } = await db.agentRun.findUniqueOrThrow({ where: { id: input.runId } });
      const undo = (tx: Prisma.TransactionClient, f: UndoFrame) =>
        kind === DRIVABLE_BACKFILL_KIND
          ? revertDrivableFrame(tx, input.runId, f)
          : PII_RUN_KINDS.includes(kind)
            ? revertPiiFrame(tx, deps, f)
            : kind === TRACK_RELABEL_KIND
              ? revertTrackRelabelFrame(tx, f)
              : revertFrame(tx, f, machine);
      for (;;) {
        const { done, masksToRemove } = await db.$transaction(
          async (tx) => {
            const frames = await tx.$queryRaw<UndoFrame[]>`
              SELECT frame_id::text AS "frameId", created::text[] AS created, replaced, created_at AS "createdAt"
              FROM agent_run_frames WHERE run_id = ${input.runId}::uuid AND reverted_at IS NULL
              ORDER BY frame_id LIMIT ${FRAMES_PER_BATCH}::int FOR UPDATE SKIP LOCKED`;
            if (frames.length === 0) return { done: true, masksToRemove: [] };
            const batch = emptyRevertTally();
            const gone: Array<string | null> = [];
            for (const f of frames) {
              const r = await undo(tx, f);
              if (r.superseded) batch.superseded_frames++;
              else batch.frames++;
              batch.objects_restored += r.restored;
              batch.objects_removed += r.removed.length;
              batch.kept_human_edited += r.kept;
              gone.push(...r.removed);
              await recordAudit(tx, {
                actorId: input.actorId,
                action: 'agent_run.frame_reverted',
                subjectType: 'frame',
                subjectId: f.frameId,
                detail: { run_id: input.runId, ...r, removed: r.removed.length },
              });
            }
            await tx.agentRunFrame.updateMany({
              where: { runId: input.runId, frameId: { in: frames.map((f) => f.frameId) } },
              data: { revertedAt: new Date() },
            });
            const run = await tx.agentRun.findUniqueOrThrow({ where: { id: input.runId } });
            const changes = run.changes as unknown as AgentRunSummary;
            const sum = { ...emptyRevertTally(), ...changes.reverted };
            for (const k of Object.keys(batch) as Array<keyof RevertTally>) sum[k] += batch[k];
            await tx.agentRun.update({
              where: { id: input.runId },
              data: { changes: { ...changes, reverted: sum } as unknown as Prisma.InputJsonValue },
            });
            return { done: false, masksToRemove: gone };
          },
          { timeout: 120_000 },
        );
        await masks.remove(masksToRemove);
        ctx.heartbeat();
        if (done) break;
      }
      const run = await db.agentRun.update({
        where: { id: input.runId },
        data: { status: 'reverted', revertedAt: new Date() },
      });
      const tally = (run.changes as unknown as AgentRunSummary).reverted ?? emptyRevertTally();
      await recordAudit(db, {
        actorId: input.actorId,
        action: 'agent_run.reverted',
        subjectType: 'agent_run',
        subjectId: run.id,
        detail: { kind: run.kind, ...tally },
      });
      await deps.events.publish('jobs', 'agent.run.reverted', agentRunOut(run));
      return tally;
    },

    /** A revert that gave up: the run says so and can be reverted again (what was reverted stays reverted). */
    async failAgentRunRevert(input: { runId: string; error: string }): Promise<void> {
      const run = await db.agentRun.update({
        where: { id: input.runId },
        data: { status: 'revert_failed', error: input.error },
      });
      await recordAudit(db, {
        actorId: null,
        action: 'agent_run.revert_failed',
        subjectType: 'agent_run',
        subjectId: run.id,
        detail: { error: input.error },
      });
      await deps.events.publish('jobs', 'agent.run.revert_failed', agentRunOut(run));
    },
  };
}

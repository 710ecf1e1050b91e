import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import { isMachineSource } from '../../core/objects/sources';
import { CLASS_MOVE_RULE, classMoveRefusal, type ClassMoveRefusal } from '../../core/ontology/class-moves';
import { reviewEffect } from '../../core/review/actions';
import { randomUUID } from 'node:crypto';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { resolveClass } from '../annotations/classes';
import type { MaskStore } from '../annotations/masks';
import type { Actor } from '../annotations/objects';
import { reviewObjects, type ReviewResult } from '../annotations/review';
import type { AgentRunSummary } from '../agent-runs/runs';

export interface TrackRelabelInput {
  className: string;
  /** Every object of the track → the version the caller saw; null skips the check. */
  expectedVersions: Readonly<Record<string, number>> | null;
  reviewer: string;
}

/** Why an object of the track kept its class. */
export type LeftReason = 'human_source' | 'not_machine_source' | 'rejected' | 'already_target';

interface TrackMember {
  object_id: string;
  frame_id: string;
  frame_index: number;
  class_name: string;
  source: string;
}

/**
 * What an object of the track gets: a person's work (`human`, or `imported`, which is kept like
 * it) is never relabelled in bulk, nor is a box a person rejected, and a machine object already of
 * the target class needs no move.
 */
function leftReason(
  o: { source: string; state: string; classId: number },
  targetId: number,
): LeftReason | null {
  if (o.source === 'human') return 'human_source';
  if (!isMachineSource(o.source)) return 'not_machine_source';
  // A relabel review accepts what it moves: a box a person rejected would come back as accepted.
  if (o.state === 'rejected') return 'rejected';
  return o.classId === targetId ? 'already_target' : null;
}

/** The caller's view of the track against the track now: an object added, gone or changed is a 409. */
function checkExpectedVersions(
  expected: Readonly<Record<string, number>>,
  current: ReadonlyArray<{ id: string; version: number }>,
): void {
  const now = new Map(current.map((o) => [o.id, o.version]));
  const ids = new Set([...Object.keys(expected), ...now.keys()]);
  const conflicts = [...ids]
    .filter((id) => expected[id] !== now.get(id))
    .map((id) => ({ object_id: id, expected: expected[id] ?? null, actual: now.get(id) ?? null }));
  if (conflicts.length)
    throw new ConflictError(
      `track changed since it was read (${conflicts.length} object(s) added, gone or edited); nothing was relabelled`,
      { conflicts },
    );
}

/**
 * Relabels every machine object of a track to one class as the caller's review (docs/track-relabel.md):
 * one bulk `relabel` review through `reviewObjects`, so the objects, their versions, reviews (with
 * the prior source, conf and provenance in `before`) and the batch stamp are what a reviewer's bulk
 * relabel writes, in one transaction. Each move must pass the class-move rule; one implausible
 * move refuses the whole request before anything is written. The versions read here are the
 * batch's expected versions, so an object a person touched meanwhile makes it a 409, not a
 * silent overwrite of human work.
 */
export async function relabelTrack(
  db: Db,
  masks: Pick<MaskStore, 'read'>,
  trackId: string,
  input: TrackRelabelInput,
  actor: Actor,
) {
  const track = await db.track.findUnique({ where: { id: trackId }, select: { id: true } });
  if (!track) throw new NotFoundError(`no track ${trackId}`);
  const target = await resolveClass(db, input.className);
  const objects = await db.annoObject.findMany({
    where: { trackId },
    include: {
      class: { select: { name: true, l0: true, l1: true } },
      frame: { select: { index: true } },
    },
    orderBy: [{ frame: { index: 'asc' } }, { id: 'asc' }],
  });
  if (input.expectedVersions) checkExpectedVersions(input.expectedVersions, objects);

  const member = (o: (typeof objects)[number]): TrackMember => ({
    object_id: o.id,
    frame_id: o.frameId,
    frame_index: o.frame.index,
    class_name: o.class.name,
    source: o.source,
  });
  const left = objects.flatMap((o) => {
    const reason = leftReason(o, target.id);
    return reason ? [{ ...member(o), reason }] : [];
  });
  const moving = objects.filter((o) => leftReason(o, target.id) === null);

  const refusals = new Map<string, ClassMoveRefusal & { object_ids: string[] }>();
  for (const o of moving) {
    const refusal = classMoveRefusal(o.class, target);
    if (!refusal) continue;
    const seen = refusals.get(o.class.name) ?? { ...refusal, object_ids: [] };
    seen.object_ids.push(o.id);
    refusals.set(o.class.name, seen);
  }
  if (refusals.size) {
    const moves = [...refusals.values()];
    throw new RefusedError(
      `implausible class move (rule ${CLASS_MOVE_RULE}): ${moves.map((m) => m.reason).join('; ')}; nothing was relabelled`,
      { rule: CLASS_MOVE_RULE, refused_moves: moves },
    );
  }

  const base = { track_id: trackId, class_name: target.name, left };
  if (moving.length === 0) return { ...base, batch_id: null, run_id: null, relabelled: [] };

  const runId = randomUUID();

  const reviewed = await reviewObjects(
    db,
    masks,
    {
      objectIds: moving.map((o) => o.id),
      action: 'relabel',
      effect: reviewEffect({ action: 'relabel', state: null, className: target.name, attrs: null }),
      expectedVersions: Object.fromEntries(moving.map((o) => [o.id, o.version])),
      reviewer: input.reviewer,
      timeSpentMs: 0,
      bulk: true,
      alsoWrite: (tx, written) =>
        recordRelabelUndo(tx, runId, { trackId, className: target.name, moving, written }, actor),
    },
    actor,
  );
  const after = new Map(reviewed.objects.map((o) => [o.id, o]));
  const relabelled = moving.map((o) => {
    const { version, state, source } = after.get(o.id)!;
    return { ...member(o), from_class: o.class.name, class_name: target.name, source, state, version };
  });
  // The batch's own audit entry (objects.bulk_reviewed) commits with it; this one files it under the track.
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'track.relabelled',
    subjectType: 'track',
    subjectId: trackId,
    detail: {
      batch_id: reviewed.batchId,
      run_id: runId,
      class: target.name,
      relabelled: relabelled.length,
      left: left.map((l) => ({ object_id: l.object_id, reason: l.reason })),
    } as Prisma.InputJsonValue,
    requestId: actor.requestId,
  });
  return { ...base, batch_id: reviewed.batchId, run_id: runId, relabelled };
}

/** The kind of the agent run a track relabel records, so `POST /api/agent/runs/{run_id}/revert` undoes it. */
export const TRACK_RELABEL_KIND = 'track-relabel';

/** What a track relabel's undo row keeps per object: what the review changed, and the version it left. */
interface RelabelUndoEntry {
  object_id: string;
  before: { class_id: number; source: string; state: string };
  version_after: number;
}

/**
 * The relabel's undo record, written in the review's transaction so a relabel without one cannot
 * exist: a completed `track-relabel` agent run naming the batch, and per frame the objects moved
 * with their class, source and state before (the review's `before` holds the same; this copy is
 * what the revert walk reads, frame by frame, like every run's).
 */
async function recordRelabelUndo(
  tx: Prisma.TransactionClient,
  runId: string,
  relabel: {
    trackId: string;
    className: string;
    moving: ReadonlyArray<{ id: string; frameId: string; classId: number; source: string; state: string }>;
    written: ReviewResult;
  },
  actor: Actor,
): Promise<void> {
  const after = new Map(relabel.written.objects.map((o) => [o.id, o.version]));
  const byFrame = new Map<string, RelabelUndoEntry[]>();
  for (const o of relabel.moving) {
    const entry = {
      object_id: o.id,
      before: { class_id: o.classId, source: o.source, state: o.state },
      version_after: after.get(o.id)!,
    };
    byFrame.set(o.frameId, [...(byFrame.get(o.frameId) ?? []), entry]);
  }
  const summary: AgentRunSummary = {
    sessions: { completed: 1, failed: 0, skipped: 0 },
    frames: byFrame.size,
    objects_replaced: 0,
    objects_created: 0,
    reverted: null,
  };
  await tx.agentRun.create({
    data: {
      id: runId,
      kind: TRACK_RELABEL_KIND,
      status: 'completed',
      params: { track_id: relabel.trackId, class_name: relabel.className, batch_id: relabel.written.batchId },
      changes: { ...summary, objects_relabelled: relabel.moving.length } as unknown as Prisma.InputJsonValue,
      createdBy: actor.userId,
      finishedAt: new Date(),
    },
  });
  await tx.agentRunFrame.createMany({
    data: [...byFrame].map(([frameId, entries]) => ({
      runId,
      frameId,
      // The frames' job is the review batch: the one write the run undoes.
      jobId: relabel.written.batchId!,
      created: entries.map((e) => e.object_id),
      replaced: entries as unknown as Prisma.InputJsonValue,
    })),
  });
}

/**
 * Undoes a track relabel on one frame: each object the relabel moved and nobody changed since
 * (its version is still the one the relabel left) gets back its class, source and state, with the
 * next version, so a client holding the relabel's version sees a 409 rather than writing over the
 * undo. An object changed since is a person's later work and is kept.
 */
export async function revertTrackRelabelFrame(
  tx: Prisma.TransactionClient,
  f: { created: string[]; replaced: Prisma.JsonValue },
) {
  const entries = f.replaced as unknown as RelabelUndoEntry[];
  let restored = 0;
  for (const e of entries)
    restored += await tx.annoObject
      .updateMany({
        where: { id: e.object_id, version: e.version_after },
        data: {
          classId: e.before.class_id,
          source: e.before.source,
          state: e.before.state,
          version: { increment: 1 },
        },
      })
      .then((r) => r.count);
  return {
    superseded: false,
    restored,
    removed: [] as Array<string | null>,
    kept: entries.length - restored,
  };
}

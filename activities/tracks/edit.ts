import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import {
  clearFlagsAt,
  eventMoves,
  joinFrames,
  mergedAttrs,
  mergeTrajectories,
  partitionAt,
  planMerge,
  refuseEmptySide,
  SMOOTHING_METHOD,
  smoothBoxes,
  withBoxes,
  type EditObject,
  type MergeKeep,
  type StoredSwitchFlag,
  type TrajectoryPoint,
} from '../../core/tracking/edit';
import { isKeyframe } from '../../core/tracking/interpolate';
import type { Prisma, Track } from '../../generated/prisma/client';
import { objectOut, type Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { asJsonObject } from './events';
import { trackOut } from './retrack';

type Tx = Prisma.TransactionClient;

const json = (value: unknown) => value as Prisma.InputJsonValue;
const trajectoryOf = (t: Track) => t.trajectory as unknown as TrajectoryPoint[];
const flagsOf = (t: Track) => t.idSwitchFlags as unknown as StoredSwitchFlag[];

/**
 * Locks the tracks' rows in id order (two merges naming the same pair either way round queue
 * rather than deadlock) and reads them; an unknown one is 404.
 */
async function lockTracks(tx: Tx, trackIds: readonly string[]): Promise<Map<string, Track>> {
  const sorted = [...new Set(trackIds)].sort();
  const locked = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text FROM tracks WHERE id = ANY(${sorted}::uuid[]) ORDER BY id FOR UPDATE`;
  const missing = sorted.find((id) => !locked.some((l) => l.id === id));
  if (missing) throw new NotFoundError(`no track ${missing}`);
  const tracks = await tx.track.findMany({ where: { id: { in: sorted } } });
  return new Map(tracks.map((t) => [t.id, t]));
}

async function editObjects(tx: Tx, trackId: string): Promise<EditObject[]> {
  const rows = await tx.annoObject.findMany({
    where: { trackId },
    select: {
      id: true,
      frameId: true,
      source: true,
      state: true,
      attrs: true,
      bbox: true,
      frame: { select: { index: true } },
    },
  });
  return rows.map((o) => ({
    objectId: o.id,
    frameId: o.frameId,
    frameIndex: o.frame.index,
    source: o.source,
    state: o.state,
    keyframe: isKeyframe(o.attrs),
    bbox: o.bbox as Box,
  }));
}

/** A track's move of objects is content a caller sees (`track_id`), so each moved object's version goes up. */
async function relink(tx: Tx, objectIds: readonly string[], trackId: string | null): Promise<void> {
  if (objectIds.length)
    await tx.annoObject.updateMany({
      where: { id: { in: [...objectIds] } },
      data: { trackId, version: { increment: 1 } },
    });
}

export interface MergeInput {
  otherTrackId: string;
  keep: MergeKeep | null;
}

/**
 * Merges the other track into this one (docs/track-edits.md) in one transaction with both rows
 * locked: its objects join (a contested frame resolved by `keep`, refused without), the
 * trajectories merge in time order, its events move over, this track's attrs win, switch flags on
 * the join frames are cleared, and the other track is deleted.
 */
export async function mergeTracks(db: Db, trackId: string, input: MergeInput, actor: Actor) {
  if (input.otherTrackId === trackId) throw new RefusedError('a track cannot be merged into itself');
  return db.$transaction(
    async (tx) => {
      const tracks = await lockTracks(tx, [trackId, input.otherTrackId]);
      const self = tracks.get(trackId)!;
      const other = tracks.get(input.otherTrackId)!;
      if (self.sessionId !== other.sessionId)
        throw new RefusedError(
          `track ${other.id} is of session ${other.sessionId}, not ${self.sessionId}; only tracks of one session merge`,
        );
      const selfAttrs = asJsonObject(self.attrs);
      const otherAttrs = asJsonObject(other.attrs);
      if (selfAttrs.class_name && otherAttrs.class_name && selfAttrs.class_name !== otherAttrs.class_name)
        throw new RefusedError(
          `track ${trackId} is a ${String(selfAttrs.class_name)} track and ${other.id} a ${String(otherAttrs.class_name)} one; relabel one first`,
        );
      const plan = planMerge(await editObjects(tx, trackId), await editObjects(tx, other.id), input.keep);
      const unlinked = new Set(plan.unlinked);
      const trajectory = mergeTrajectories(trajectoryOf(self), trajectoryOf(other), unlinked);
      const otherIds = new Set(plan.moved);
      const joins = joinFrames(trajectory, otherIds);
      const flags = clearFlagsAt([...flagsOf(self), ...flagsOf(other)], joins);

      await relink(tx, plan.unlinked, null);
      await relink(tx, plan.moved, trackId);
      const events = await tx.trackEvent.updateMany({ where: { trackId: other.id }, data: { trackId } });
      await tx.track.delete({ where: { id: other.id } });
      const merged = await tx.track.update({
        where: { id: trackId },
        data: {
          trajectory: json(trajectory),
          idSwitchFlags: json(flags.kept.sort((a, b) => a.frame - b.frame)),
          attrs: json(mergedAttrs(selfAttrs, otherAttrs)),
        },
      });
      const counts = {
        objects_moved: plan.moved.length,
        objects_unlinked: plan.unlinked.length,
        events_moved: events.count,
        switch_flags_cleared: flags.cleared.length,
      };
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'track.merged',
        subjectType: 'track',
        subjectId: trackId,
        detail: json({
          merged_track_id: other.id,
          keep: input.keep,
          conflict_frames: plan.conflicts.map((c) => c.frame_id),
          ...counts,
        }),
        requestId: actor.requestId,
      });
      return {
        track_id: trackId,
        deleted_track_id: other.id,
        keep: input.keep,
        ...counts,
        conflicts: plan.conflicts,
        moved_object_ids: plan.moved,
        unlinked_object_ids: plan.unlinked,
        cleared_switch_flags: flags.cleared,
        track: trackOut(merged),
      };
    },
    { timeout: 30_000 },
  );
}

/**
 * Splits a track at a frame of its session (docs/track-edits.md): objects from that frame on (by
 * frame index) move to a new track of the same session and tracker version, with the trajectory
 * and switch flags after the cut; events go with the side holding their start.
 */
export async function splitTrack(db: Db, trackId: string, atFrameId: string, actor: Actor) {
  return db.$transaction(
    async (tx) => {
      const track = (await lockTracks(tx, [trackId])).get(trackId)!;
      const frame = await tx.frame.findUnique({
        where: { id: atFrameId },
        select: { id: true, sessionId: true, index: true },
      });
      if (!frame) throw new NotFoundError(`no frame ${atFrameId}`);
      if (frame.sessionId !== track.sessionId)
        throw new RefusedError(`frame ${atFrameId} is not a frame of the track's session ${track.sessionId}`);
      const at = frame.index;
      const objects = partitionAt(await editObjects(tx, trackId), at, (o) => o.frameIndex);
      refuseEmptySide(objects, at);
      const trajectory = partitionAt(trajectoryOf(track), at, (p) => p.frame_index);
      // A flag on the cut frame asked whether the identity changed there: the split answers it.
      const flags = clearFlagsAt(flagsOf(track), new Set([frame.id]));
      const flagSides = partitionAt(flags.kept, at, (f) => f.frame);
      const { intent: _judgedOnTheWhole, ...attrs } = asJsonObject(track.attrs);

      const created = await tx.track.create({
        data: {
          sessionId: track.sessionId,
          trackerVersion: track.trackerVersion,
          trajectory: json(trajectory.after),
          idSwitchFlags: json(flagSides.after),
          attrs: json({ ...attrs, split_from: trackId }),
        },
      });
      const original = await tx.track.update({
        where: { id: trackId },
        data: { trajectory: json(trajectory.before), idSwitchFlags: json(flagSides.before) },
      });
      const movedIds = objects.after.map((o) => o.objectId);
      await relink(tx, movedIds, created.id);
      const events = await tx.trackEvent.findMany({
        where: { trackId },
        select: { id: true, startFrame: true },
      });
      const starts = await tx.frame.findMany({
        where: { id: { in: events.flatMap((e) => (e.startFrame ? [e.startFrame] : [])) } },
        select: { id: true, index: true },
      });
      const startIndex = new Map(starts.map((f) => [f.id, f.index]));
      const movedEvents = events
        .filter((e) => eventMoves(e.startFrame ? (startIndex.get(e.startFrame) ?? null) : null, at))
        .map((e) => e.id);
      if (movedEvents.length)
        await tx.trackEvent.updateMany({ where: { id: { in: movedEvents } }, data: { trackId: created.id } });
      const counts = {
        objects_kept: objects.before.length,
        objects_moved: movedIds.length,
        events_kept: events.length - movedEvents.length,
        events_moved: movedEvents.length,
        switch_flags_cleared: flags.cleared.length,
      };
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'track.split',
        subjectType: 'track',
        subjectId: trackId,
        detail: { new_track_id: created.id, at_frame_id: frame.id, at_frame_index: at, ...counts },
        requestId: actor.requestId,
      });
      return {
        track_id: trackId,
        new_track_id: created.id,
        at_frame_id: frame.id,
        at_frame_index: at,
        ...counts,
        moved_object_ids: movedIds,
        moved_event_ids: movedEvents,
        cleared_switch_flags: flags.cleared,
        track: trackOut(original),
        new_track: trackOut(created),
      };
    },
    { timeout: 30_000 },
  );
}

/** A move below this many pixels is rounding, not smoothing: the object is not rewritten. */
const MOVE_EPSILON_PX = 1e-6;

const moved = (a: Box, b: Box) => a.some((v, i) => Math.abs(v - b[i]!) > MOVE_EPSILON_PX);

/**
 * Smooths the boxes of the track's machine objects (docs/track-edits.md) with the centred moving
 * average of core/tracking/edit.ts; a person's boxes and keyframes are averaged over but never
 * moved. With `dryRun` the answer is the same and nothing is written.
 */
export async function smoothTrack(
  db: Db,
  trackId: string,
  input: { window: number; dryRun: boolean },
  actor: Actor,
) {
  return db.$transaction(
    async (tx) => {
      const track = (await lockTracks(tx, [trackId])).get(trackId)!;
      const objects = await editObjects(tx, trackId);
      const smoothed = smoothBoxes(objects, input.window);
      const changed = smoothed.filter((s) => moved(s.before, s.after));
      const fixed = objects.filter((o) => !smoothed.some((s) => s.objectId === o.objectId)).length;
      const versions = new Map(
        (
          await tx.annoObject.findMany({
            where: { id: { in: changed.map((s) => s.objectId) } },
            select: { id: true, version: true },
          })
        ).map((o) => [o.id, o.version]),
      );
      if (!input.dryRun) {
        for (const s of changed) {
          const res = await tx.annoObject.updateMany({
            // A review does not lock the track: one that made the object a person's meanwhile wins.
            where: {
              id: s.objectId,
              version: versions.get(s.objectId)!,
              source: { in: [...MACHINE_SOURCE_SPELLINGS] },
            },
            data: { bbox: s.after, version: { increment: 1 } },
          });
          if (res.count === 0)
            throw new ConflictError(
              `object ${s.objectId} changed while the track was smoothed; nothing was written`,
              {
                conflicts: [{ object_id: s.objectId }],
              },
            );
        }
        await tx.provenance.createMany({
          data: changed.map((s) => ({
            objectId: s.objectId,
            paths: ['smoothed'],
            reasonerTrace: json({ method: SMOOTHING_METHOD, window: input.window, before: s.before }),
          })),
        });
        const attrs = asJsonObject(track.attrs);
        await tx.track.update({
          where: { id: trackId },
          data: {
            trajectory: json(
              withBoxes(trajectoryOf(track), new Map(changed.map((s) => [s.objectId, s.after]))),
            ),
            attrs: json({
              ...attrs,
              smoothing: { method: SMOOTHING_METHOD, window: input.window, objects: changed.length },
            }),
          },
        });
        await recordAudit(tx, {
          actorId: actor.userId,
          action: 'track.smoothed',
          subjectType: 'track',
          subjectId: trackId,
          detail: { method: SMOOTHING_METHOD, window: input.window, moved: changed.length, fixed },
          requestId: actor.requestId,
        });
      }
      const written = input.dryRun
        ? []
        : await tx.annoObject.findMany({
            where: { id: { in: changed.map((s) => s.objectId) } },
            include: { class: { select: { name: true } } },
          });
      return {
        track_id: trackId,
        method: SMOOTHING_METHOD,
        window: input.window,
        dry_run: input.dryRun,
        moved: changed.length,
        unchanged: smoothed.length - changed.length,
        fixed,
        max_displacement: Math.max(0, ...changed.map((s) => s.displacement)),
        items: smoothed.map((s) => ({
          object_id: s.objectId,
          frame_index: s.frameIndex,
          before: s.before,
          after: s.after,
          displacement: s.displacement,
          moved: changed.includes(s),
        })),
        objects: written.map(objectOut),
      };
    },
    { timeout: 30_000 },
  );
}

import { randomUUID } from 'node:crypto';
import { InputError, RefusedError } from '../../core/errors';
import { markingMap } from '../../core/lanes/image';
import type { Point } from '../../core/lanes/polyline';
import { refineLane, type Refined } from '../../core/lanes/propagate';
import type { Lane } from '../../generated/prisma/client';
import { asJsonObject } from '../tracks/events';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { frameRgbOrNull } from './image';
import { frameOrThrow, json, laneOut, lockFrame, versionConflict } from './store';

type CopyReason = 'road_edge' | 'no_image' | 'no_marking';

/** The frame after `frame` in its session: the next timestamp, the next index on a tie. */
async function nextFrame(db: Db, frame: { sessionId: string; timestampMs: number; index: number }) {
  return db.frame.findFirst({
    where: {
      sessionId: frame.sessionId,
      OR: [
        { timestampMs: { gt: frame.timestampMs } },
        { timestampMs: frame.timestampMs, index: { gt: frame.index } },
      ],
    },
    orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
  });
}

/**
 * POST /api/frames/{frame_id}/lanes/propagate: the frame's lanes (or the ones named) are carried
 * to the next frame of the session, each refined against that frame's markings (core/lanes/propagate)
 * or copied (a road edge has no paint to follow; no stored image; no marking found). They keep the
 * lane's type and group (a lane without a group gets one, which it keeps too), as source
 * propagated. On the next frame a propagated lane of the same group is replaced; a person's or a
 * proposed one is kept and that lane is skipped. One transaction.
 */
export async function propagateFrameLanes(
  db: Db,
  storage: ObjectStore,
  frameId: string,
  input: { lane_ids?: string[] | undefined },
  actor: Actor,
) {
  const frame = await frameOrThrow(db, frameId);
  const lanes = await db.lane.findMany({
    where: { frameId, ...(input.lane_ids ? { id: { in: input.lane_ids } } : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const missing = (input.lane_ids ?? []).filter((id) => !lanes.some((l) => l.id === id));
  if (missing.length)
    throw new InputError(`lanes not on frame ${frameId}: ${missing.join(', ')}`, [
      { field: 'body.lane_ids', message: `not lanes of this frame: ${missing.join(', ')}` },
    ]);
  if (!lanes.length) throw new RefusedError(`frame ${frameId} has no lanes to propagate`);
  const next = await nextFrame(db, frame);
  if (!next)
    throw new RefusedError(`frame ${frameId} is the last frame of its session: there is no next frame`);
  const image = await frameRgbOrNull(storage, next);
  const map = image && markingMap(image);
  const carried = lanes.map((lane) => {
    const points = lane.points as Point[];
    const reason: CopyReason | null = lane.laneType === 'road_edge' ? 'road_edge' : map ? null : 'no_image';
    const refined: Refined =
      reason || !map ? { points, refined: false, matched: 0, shift_px: null } : refineLane(map, points);
    return { lane, refined, reason: reason ?? (refined.refined ? null : ('no_marking' as const)) };
  });

  return db.$transaction(async (tx) => {
    await lockFrame(tx, next.id);
    const groupOf = new Map<string, string>();
    for (const { lane } of carried) {
      if (lane.laneGroupId) {
        groupOf.set(lane.id, lane.laneGroupId);
        continue;
      }
      const group = randomUUID();
      const written = await tx.lane.updateMany({
        where: { id: lane.id, version: lane.version },
        data: { laneGroupId: group, version: { increment: 1 } },
      });
      if (written.count === 0) throw versionConflict(lane.id, lane.version, null);
      groupOf.set(lane.id, group);
    }
    const there = await tx.lane.findMany({
      where: { frameId: next.id, laneGroupId: { in: [...groupOf.values()] } },
    });
    const skipped: Array<{
      lane_id: string;
      lane_group_id: string;
      existing_lane_id: string;
      source: string;
    }> = [];
    const toCarry: typeof carried = [];
    for (const c of carried) {
      const kept = there.find((t) => t.laneGroupId === groupOf.get(c.lane.id) && t.source !== 'propagated');
      if (kept)
        skipped.push({
          lane_id: c.lane.id,
          lane_group_id: kept.laneGroupId!,
          existing_lane_id: kept.id,
          source: kept.source,
        });
      else toCarry.push(c);
    }
    const replaced = await tx.lane.deleteMany({
      where: {
        frameId: next.id,
        source: 'propagated',
        laneGroupId: { in: toCarry.map((c) => groupOf.get(c.lane.id)!) },
      },
    });
    const created = await tx.lane.createManyAndReturn({
      data: toCarry.map(({ lane, refined, reason }) => ({
        frameId: next.id,
        sessionId: next.sessionId,
        points: json(refined.points),
        laneType: lane.laneType,
        source: 'propagated',
        conf: refined.refined ? refined.matched : null,
        laneGroupId: groupOf.get(lane.id)!,
        attrs: json({ ...asJsonObject(lane.attrs), propagation: propagationOf(lane, refined, reason) }),
        createdBy: actor.userId,
      })),
    });
    const refinedCount = toCarry.filter((c) => c.refined.refined).length;
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lanes.propagated',
      subjectType: 'frame',
      subjectId: frameId,
      detail: {
        to_frame_id: next.id,
        propagated: created.length,
        refined: refinedCount,
        replaced: replaced.count,
        skipped: skipped.length,
      },
      requestId: actor.requestId,
    });
    const items = created.map(laneOut);
    return {
      from_frame_id: frameId,
      to_frame_id: next.id,
      image_stored: image !== null,
      refined: refinedCount,
      copied: created.length - refinedCount,
      replaced: replaced.count,
      skipped,
      items,
      count: items.length,
    };
  });
}

const propagationOf = (lane: Lane, r: Refined, reason: CopyReason | null) => ({
  from_lane_id: lane.id,
  from_frame_id: lane.frameId,
  refined: r.refined,
  matched: r.matched,
  shift_px: r.shift_px,
  copied_because: reason,
});

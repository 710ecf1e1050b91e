import { randomUUID } from 'node:crypto';
import { CLASSIFIER_VERSION, classifyLane } from '../../core/lanes/classify';
import { markingMap } from '../../core/lanes/image';
import { DEFAULT_LINK, linkLanes, type LinkFrame } from '../../core/lanes/link';
import type { Point } from '../../core/lanes/polyline';
import { LANE_TYPES } from '../../core/lanes/vocabulary';
import type { Lane, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { requireSession } from '../sessions';
import { asJsonObject } from '../tracks/events';
import { frameRgbOrNull } from './image';
import { json, versionConflict } from './store';

/** The session-wide lane writes: classify and link (docs/lanes.md). */

/** Writes each lane's new fields if it is still at the version read; any other version fails the whole batch. */
async function writeAll(
  tx: Prisma.TransactionClient,
  writes: ReadonlyArray<{ lane: Lane; data: Prisma.LaneUpdateManyMutationInput }>,
): Promise<void> {
  for (const { lane, data } of writes) {
    const written = await tx.lane.updateMany({
      where: { id: lane.id, version: lane.version },
      data: { ...data, version: { increment: 1 } },
    });
    if (written.count === 0) throw versionConflict(lane.id, lane.version, null);
  }
}

/** A session's lanes are written one row at a time (each checked against its version): allow for thousands. */
const SESSION_TX = { timeout: 120_000 };

const sessionOrder = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

/** The lane still has the type the classifier gave it (a person who edited only its points left the type alone). */
const typeIsClassifiers = (l: Lane) => {
  const given = asJsonObject(l.attrs).classify;
  return (
    typeof given === 'object' && given !== null && (given as { lane_type?: unknown }).lane_type === l.laneType
  );
};

/**
 * Types every lane of the session whose type is unknown or was not set by a person (with
 * `overwrite`, every lane) from its frame's pixels (core/lanes/classify). Lanes on frames without a
 * stored image are left as they are and their frames listed. One transaction.
 */
export async function classifySessionLanes(
  db: Db,
  storage: ObjectStore,
  sessionId: string,
  input: { overwrite: boolean },
  actor: Actor,
) {
  await requireSession(db, sessionId);
  const lanes = await db.lane.findMany({ where: { sessionId }, orderBy: sessionOrder });
  const eligible = lanes.filter(
    (l) => input.overwrite || l.laneType === 'unknown' || l.source !== 'human' || typeIsClassifiers(l),
  );
  const frameIds = [...new Set(eligible.map((l) => l.frameId))];
  const frames = await db.frame.findMany({ where: { id: { in: frameIds } } });
  const writes: Array<{ lane: Lane; data: Prisma.LaneUpdateManyMutationInput }> = [];
  const noImage: string[] = [];
  const byType = Object.fromEntries(LANE_TYPES.map((t) => [t, 0])) as Record<string, number>;
  let changed = 0;
  // One decoded frame at a time: a session can hold thousands.
  for (const frame of frames) {
    const image = await frameRgbOrNull(storage, frame);
    if (!image) {
      noImage.push(frame.id);
      continue;
    }
    const map = markingMap(image);
    for (const lane of eligible.filter((l) => l.frameId === frame.id)) {
      const c = classifyLane(image, map, lane.points as Point[]);
      byType[c.lane_type] = (byType[c.lane_type] ?? 0) + 1;
      if (c.lane_type !== lane.laneType) changed++;
      writes.push({
        lane,
        data: {
          laneType: c.lane_type,
          attrs: json({
            ...asJsonObject(lane.attrs),
            colour: c.colour,
            markings: c.markings,
            solid_side: c.solid_side,
            classify: { version: CLASSIFIER_VERSION, lane_type: c.lane_type, ...c.evidence },
          }),
        },
      });
    }
  }
  await db.$transaction(async (tx) => {
    await writeAll(tx, writes);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lanes.classified',
      subjectType: 'session',
      subjectId: sessionId,
      detail: {
        classifier: CLASSIFIER_VERSION,
        overwrite: input.overwrite,
        classified: writes.length,
        changed,
      },
      requestId: actor.requestId,
    });
  }, SESSION_TX);
  return {
    session_id: sessionId,
    classifier: CLASSIFIER_VERSION,
    overwrite: input.overwrite,
    lanes: lanes.length,
    classified: writes.length,
    changed,
    kept_human: lanes.length - eligible.length,
    by_type: byType,
    frames_without_image: noImage.sort(),
    unclassified_no_image: eligible.filter((l) => noImage.includes(l.frameId)).length,
  };
}

/**
 * Links the session's lanes across consecutive frames into lane groups (core/lanes/link) and
 * stores each lane's group id where it changes. One transaction.
 */
export async function linkSessionLanes(
  db: Db,
  sessionId: string,
  input: { max_distance_px?: number | undefined },
  actor: Actor,
) {
  await requireSession(db, sessionId);
  const frames = await db.frame.findMany({
    where: { sessionId },
    orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
    select: { id: true, width: true },
  });
  const lanes = await db.lane.findMany({ where: { sessionId }, orderBy: sessionOrder });
  const linkFrames: LinkFrame[] = frames.map((f) => ({
    frameId: f.id,
    width: f.width,
    lanes: lanes
      .filter((l) => l.frameId === f.id)
      .map((l) => ({ id: l.id, points: l.points as Point[], groupId: l.laneGroupId })),
  }));
  const linked = linkLanes(linkFrames, randomUUID, DEFAULT_LINK, input.max_distance_px);
  const writes = lanes
    .filter((l) => linked.groups.get(l.id) !== l.laneGroupId)
    .map((lane) => ({ lane, data: { laneGroupId: linked.groups.get(lane.id)! } }));
  await db.$transaction(async (tx) => {
    await writeAll(tx, writes);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lanes.linked',
      subjectType: 'session',
      subjectId: sessionId,
      detail: { lanes: lanes.length, groups: linked.chains, pairs: linked.pairs, changed: writes.length },
      requestId: actor.requestId,
    });
  }, SESSION_TX);
  return {
    session_id: sessionId,
    frames_with_lanes: linkFrames.filter((f) => f.lanes.length > 0).length,
    lanes: lanes.length,
    groups: linked.chains,
    linked_pairs: linked.pairs,
    changed: writes.length,
    max_distance_px: input.max_distance_px ?? null,
    max_distance_frac: input.max_distance_px === undefined ? DEFAULT_LINK.maxDistanceFrac : null,
  };
}

import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import { polylineProblem, type Point } from '../../core/lanes/polyline';
import { LANE_SOURCES, LANE_TYPES, type LaneType } from '../../core/lanes/vocabulary';
import type { Lane, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { requireSession } from '../sessions';
import { recordAudit } from '../audit';
import { asJsonObject } from '../tracks/events';
import type { Db } from '../db';

/** Lane rows (table `lanes`, docs/lanes.md): the routes' reads and edits. */

export type Tx = Db | Prisma.TransactionClient;

export const json = (v: unknown) => v as Prisma.InputJsonValue;

/** A lane as the routes answer it. */
export function laneOut(l: Lane) {
  return {
    lane_id: l.id,
    frame_id: l.frameId,
    session_id: l.sessionId,
    points: l.points as Point[],
    lane_type: l.laneType,
    source: l.source,
    conf: l.conf,
    lane_group_id: l.laneGroupId,
    attrs: l.attrs,
    version: l.version,
    created_by: l.createdBy,
    created_at: l.createdAt.toISOString(),
    updated_at: l.updatedAt.toISOString(),
  };
}
export type LaneOut = ReturnType<typeof laneOut>;

export async function frameOrThrow(db: Tx, frameId: string) {
  const frame = await db.frame.findUnique({ where: { id: frameId } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  return frame;
}

/**
 * The frame, its row locked for the rest of the transaction, so that two writes replacing the
 * machine lanes of one frame (propose, propagate) run one after the other.
 */
export async function lockFrame(tx: Prisma.TransactionClient, frameId: string) {
  const locked = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM frames WHERE id = ${frameId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no frame ${frameId}`);
  return tx.frame.findUniqueOrThrow({ where: { id: frameId } });
}

/** Points must lie on the frame and make a line; the field is named for a 422. */
export function checkPoints(points: Point[], frame: { width: number; height: number }): void {
  const problem = polylineProblem(points, frame);
  if (problem)
    throw new InputError(`points: ${problem.message}`, [
      {
        field: problem.index === null ? 'body.points' : `body.points.${problem.index}`,
        message: problem.message,
      },
    ]);
}

const order = [{ createdAt: 'asc' as const }, { id: 'asc' as const }];

export async function listFrameLanes(db: Db, frameId: string) {
  await frameOrThrow(db, frameId);
  const lanes = await db.lane.findMany({ where: { frameId }, orderBy: order });
  return { frame_id: frameId, items: lanes.map(laneOut), count: lanes.length };
}

export interface LaneIn {
  points: Point[];
  lane_type: LaneType;
  conf: number | null;
  lane_group_id: string | null;
  attrs: Record<string, unknown>;
}

/** A lane a person drew: source human. */
export async function createLane(db: Db, frameId: string, input: LaneIn, actor: Actor): Promise<LaneOut> {
  return db.$transaction(async (tx) => {
    const frame = await frameOrThrow(tx, frameId);
    checkPoints(input.points, frame);
    const lane = await tx.lane.create({
      data: {
        frameId,
        sessionId: frame.sessionId,
        points: json(input.points),
        laneType: input.lane_type,
        source: 'human',
        conf: input.conf,
        laneGroupId: input.lane_group_id,
        attrs: json(input.attrs),
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lane.created',
      subjectType: 'lane',
      subjectId: lane.id,
      detail: { frame_id: frameId, lane_type: lane.laneType, points: input.points.length },
      requestId: actor.requestId,
    });
    return laneOut(lane);
  });
}

export type LaneEdit = Partial<LaneIn> & { expected_version: number };

async function laneOrThrow(db: Tx, laneId: string): Promise<Lane> {
  const lane = await db.lane.findUnique({ where: { id: laneId } });
  if (!lane) throw new NotFoundError(`no lane ${laneId}`);
  return lane;
}

/** The conflict of an edit made on another version than the stored one (the objects' convention). */
export const versionConflict = (laneId: string, expected: number, actual: number | null) =>
  new ConflictError(
    actual === null
      ? `lane ${laneId} changed meanwhile; reload it`
      : `lane ${laneId} is at version ${actual}, not ${expected}: reload it and edit again`,
    { conflicts: [{ lane_id: laneId, expected, actual }] },
  );

/**
 * A person who sets the type takes it over from the classifier: its record (attrs.classify) goes,
 * so a later classify leaves the type alone. Attrs given are the person's, whole.
 */
function attrsAfterEdit(before: Lane, edit: LaneEdit): { attrs?: Prisma.InputJsonValue } {
  if (edit.attrs) return { attrs: json(edit.attrs) };
  if (!edit.lane_type) return {};
  const { classify: _, ...rest } = asJsonObject(before.attrs);
  return { attrs: json(rest) };
}

/**
 * PUT: the fields given replace the stored ones (attrs whole); the lane becomes the person's
 * (source human), version + 1. `expected_version` must be the stored version (409 otherwise).
 */
export async function editLane(db: Db, laneId: string, edit: LaneEdit, actor: Actor): Promise<LaneOut> {
  return db.$transaction(async (tx) => {
    const before = await laneOrThrow(tx, laneId);
    if (before.version !== edit.expected_version)
      throw versionConflict(laneId, edit.expected_version, before.version);
    if (edit.points) checkPoints(edit.points, await frameOrThrow(tx, before.frameId));
    const written = await tx.lane.updateMany({
      where: { id: laneId, version: before.version },
      data: {
        ...(edit.points ? { points: json(edit.points) } : {}),
        ...(edit.lane_type ? { laneType: edit.lane_type } : {}),
        ...(edit.conf !== undefined ? { conf: edit.conf } : {}),
        ...(edit.lane_group_id !== undefined ? { laneGroupId: edit.lane_group_id } : {}),
        ...attrsAfterEdit(before, edit),
        source: 'human',
        version: { increment: 1 },
      },
    });
    if (written.count === 0) throw versionConflict(laneId, edit.expected_version, null);
    const { expected_version: _, ...changed } = edit;
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lane.updated',
      subjectType: 'lane',
      subjectId: laneId,
      detail: json({
        frame_id: before.frameId,
        changed: Object.keys(changed).sort(),
        from_version: before.version,
        before: {
          points: before.points,
          lane_type: before.laneType,
          source: before.source,
          conf: before.conf,
          lane_group_id: before.laneGroupId,
          attrs: before.attrs,
        },
      }),
      requestId: actor.requestId,
    });
    return laneOut(await tx.lane.findUniqueOrThrow({ where: { id: laneId } }));
  });
}

export async function deleteLane(
  db: Db,
  laneId: string,
  actor: Actor,
): Promise<{ lane_id: string; frame_id: string; deleted: true }> {
  return db.$transaction(async (tx) => {
    const lane = await laneOrThrow(tx, laneId);
    const gone = await tx.lane.deleteMany({ where: { id: laneId } });
    if (gone.count === 0) throw new NotFoundError(`no lane ${laneId}`);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'lane.deleted',
      subjectType: 'lane',
      subjectId: laneId,
      detail: json(laneOut(lane)),
      requestId: actor.requestId,
    });
    return { lane_id: laneId, frame_id: lane.frameId, deleted: true };
  });
}

const zeroes = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** Counts by type and by source, every vocabulary value present (0 when none); stray stored values kept. */
function tally(rows: ReadonlyArray<{ laneType: string; source: string; n: number }>) {
  const byType: Record<string, number> = zeroes(LANE_TYPES);
  const bySource: Record<string, number> = zeroes(LANE_SOURCES);
  let lanes = 0;
  for (const r of rows) {
    byType[r.laneType] = (byType[r.laneType] ?? 0) + r.n;
    bySource[r.source] = (bySource[r.source] ?? 0) + r.n;
    lanes += r.n;
  }
  return { lanes, by_type: byType, by_source: bySource };
}

/**
 * GET /api/lanes/type-coverage: lanes per type and source over the corpus (or one session), the
 * frames with and without lanes, and per session when asked.
 */
export async function laneTypeCoverage(
  db: Db,
  query: { session_id?: string | undefined; by_session: boolean },
) {
  const sessionId = query.session_id ?? null;
  if (sessionId) await requireSession(db, sessionId);
  const counts = await db.$queryRaw<
    Array<{ sessionId: string; laneType: string; source: string; n: number }>
  >`
    SELECT session_id::text AS "sessionId", lane_type AS "laneType", source, count(*)::int AS n
    FROM lanes WHERE ${sessionId}::uuid IS NULL OR session_id = ${sessionId}::uuid
    GROUP BY session_id, lane_type, source`;
  const frames = await db.$queryRaw<Array<{ sessionId: string; frames: number; withLanes: number }>>`
    SELECT f.session_id::text AS "sessionId", count(*)::int AS frames,
      count(*) FILTER (WHERE EXISTS (SELECT 1 FROM lanes l WHERE l.frame_id = f.id))::int AS "withLanes"
    FROM frames f WHERE ${sessionId}::uuid IS NULL OR f.session_id = ${sessionId}::uuid
    GROUP BY f.session_id ORDER BY f.session_id`;
  const framesOf = (rows: typeof frames) => {
    const total = rows.reduce((s, r) => s + r.frames, 0);
    const withLanes = rows.reduce((s, r) => s + r.withLanes, 0);
    return { frames: total, frames_with_lanes: withLanes, frames_without_lanes: total - withLanes };
  };
  return {
    session_id: sessionId,
    ...tally(counts),
    ...framesOf(frames),
    ...(query.by_session
      ? {
          sessions: frames.map((f) => ({
            session_id: f.sessionId,
            ...tally(counts.filter((c) => c.sessionId === f.sessionId)),
            ...framesOf([f]),
          })),
        }
      : {}),
  };
}

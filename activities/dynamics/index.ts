import { contextEgoSpeed, sessionCamera, type EgoCamera } from '../../core/critic';
import { trackDynamics, type PointDynamics, type TrackPoint } from '../../core/dynamics';
import { NotFoundError } from '../../core/errors';
import type { Box } from '../../core/geometry/boxes';
import type { ObjectDynamics, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

type Tx = Db | Prisma.TransactionClient;

/** Which tracks: every track of a session, or the listed ones. */
export type TrackScope = { sessionId: string } | { trackIds: readonly string[] };

export interface LoadedTrack {
  track_id: string;
  session_id: string;
  points: TrackPoint[];
  /** When each object last changed: dynamics stored before that are stale. */
  updatedAt: Map<string, Date>;
}

export interface LoadedTracks {
  tracks: LoadedTrack[];
  /** Per session, where its camera model came from (a calibration in source_meta, or the default dashcam). */
  cameras: Record<string, 'session' | 'default'>;
}

const isBox = (b: readonly number[]): b is Box => b.length === 4 && b.every((x) => Number.isFinite(x));

/**
 * The tracks of the scope with their objects as time-ordered points: each object linked to the
 * track (rejected ones are not of the scene) on its frame, with the frame's size, ego speed and
 * the session's camera model.
 */
export async function loadTrackPoints(db: Tx, scope: TrackScope): Promise<LoadedTracks> {
  const tracks =
    'sessionId' in scope
      ? await db.track.findMany({
          where: { sessionId: scope.sessionId },
          select: { id: true, sessionId: true },
        })
      : await db.track.findMany({
          where: { id: { in: [...scope.trackIds] } },
          select: { id: true, sessionId: true },
        });
  const sessions = await db.session.findMany({
    where: { id: { in: [...new Set(tracks.map((t) => t.sessionId))] } },
    select: { id: true, sourceMeta: true },
  });
  const objects = await db.annoObject.findMany({
    where: { trackId: { in: tracks.map((t) => t.id) }, state: { not: 'rejected' } },
    select: {
      id: true,
      trackId: true,
      bbox: true,
      updatedAt: true,
      class: { select: { name: true, l1: true } },
      frame: {
        select: { id: true, index: true, timestampMs: true, width: true, height: true, context: true },
      },
    },
  });
  const meta = new Map(sessions.map((s) => [s.id, s.sourceMeta]));
  const cameras: LoadedTracks['cameras'] = {};
  const cameraMemo = new Map<string, EgoCamera>();
  const cameraOf = (sessionId: string, width: number, height: number): EgoCamera => {
    const key = `${sessionId}:${width}x${height}`;
    if (!cameraMemo.has(key)) {
      const cam = sessionCamera(meta.get(sessionId), width, height);
      cameras[sessionId] = cam.source;
      cameraMemo.set(key, cam.camera);
    }
    return cameraMemo.get(key)!;
  };
  const byTrack = new Map<string, LoadedTrack>(
    tracks.map((t) => [t.id, { track_id: t.id, session_id: t.sessionId, points: [], updatedAt: new Map() }]),
  );
  for (const o of objects) {
    const track = byTrack.get(o.trackId!)!;
    if (!isBox(o.bbox)) continue;
    const f = o.frame;
    track.points.push({
      object_id: o.id,
      frame_id: f.id,
      frame_index: f.index,
      ts_ms: f.timestampMs,
      box: o.bbox,
      width: f.width,
      height: f.height,
      class_name: o.class.name,
      l1: o.class.l1,
      camera: cameraOf(track.session_id, f.width, f.height),
      ego_speed_mps: contextEgoSpeed(f.context),
    });
    track.updatedAt.set(o.id, o.updatedAt);
  }
  for (const t of byTrack.values())
    t.points.sort((a, b) => a.ts_ms - b.ts_ms || a.frame_index - b.frame_index);
  return { tracks: [...byTrack.values()], cameras };
}

const storedOut = (r: ObjectDynamics): PointDynamics => ({
  object_id: r.objectId,
  speed_px_s: r.speedPxS,
  accel_px_s2: r.accelPxS2,
  heading_deg: r.headingDeg,
  speed_mps: r.speedMps,
  accel_mps2: r.accelMps2,
  range_m: r.rangeM,
  metric: r.metric,
});

/**
 * Each track's dynamics: the stored rows when they are exactly the track's objects and newer than
 * every one of them (one changed, left or joined since, and the whole track is recomputed, since
 * a neighbour's box changes a point's differences); otherwise computed now from the points.
 */
export async function dynamicsForTracks(
  db: Tx,
  tracks: readonly LoadedTrack[],
): Promise<Array<{ dynamics: PointDynamics[]; from: 'stored' | 'computed' }>> {
  const rows = await db.objectDynamics.findMany({
    where: { trackId: { in: tracks.map((t) => t.track_id) } },
  });
  const byTrack = new Map<string, ObjectDynamics[]>();
  for (const r of rows) byTrack.set(r.trackId, [...(byTrack.get(r.trackId) ?? []), r]);
  return tracks.map((t) => {
    const stored = byTrack.get(t.track_id) ?? [];
    const fresh =
      stored.length > 0 &&
      stored.length === t.points.length &&
      stored.every((r) => {
        const changed = t.updatedAt.get(r.objectId);
        return changed !== undefined && r.computedAt >= changed;
      });
    return fresh
      ? { dynamics: stored.map(storedOut), from: 'stored' as const }
      : { dynamics: trackDynamics(t.points), from: 'computed' as const };
  });
}

/**
 * Locks the sessions the scope touches, in id order (two computes of overlapping scopes cannot
 * deadlock), answering 404 for an unknown session or track. The sessions' ids.
 */
async function lockScopeSessions(tx: Prisma.TransactionClient, scope: TrackScope): Promise<string[]> {
  let sessionIds: string[];
  if ('sessionId' in scope) sessionIds = [scope.sessionId];
  else {
    const found = await tx.track.findMany({
      where: { id: { in: [...scope.trackIds] } },
      select: { id: true, sessionId: true },
    });
    const missing = scope.trackIds.filter((id) => !found.some((t) => t.id === id));
    if (missing.length) throw new NotFoundError(`no track ${missing.join(', ')}`, { track_ids: missing });
    sessionIds = [...new Set(found.map((t) => t.sessionId))].sort();
  }
  const locked = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text FROM sessions WHERE id = ANY(${sessionIds}::uuid[]) ORDER BY id FOR UPDATE`;
  if (locked.length < sessionIds.length) throw new NotFoundError(`no session ${sessionIds.join(', ')}`);
  return sessionIds;
}

const unmeasuredReason = (points: number): string =>
  points === 0
    ? 'no objects on the track'
    : points === 1
      ? 'one object: a track of one frame has no motion to measure'
      : 'objects with no neighbour on the track at another time (two objects of the track share a timestamp)';

export interface ComputeScope {
  session_id?: string | undefined;
  track_ids?: readonly string[] | undefined;
}

/**
 * Computes and stores the dynamics of a session's tracks, or of the listed tracks: the scope's
 * rows are replaced in one transaction, under the sessions' row locks (which a retrack takes too,
 * so tracks cannot change underneath).
 */
export async function computeDynamics(db: Db, input: ComputeScope, actor: Actor) {
  return db.$transaction(
    async (tx) => {
      const scope: TrackScope = input.session_id
        ? { sessionId: input.session_id }
        : { trackIds: [...new Set(input.track_ids ?? [])] };
      const sessionIds = await lockScopeSessions(tx, scope);
      const { tracks, cameras } = await loadTrackPoints(tx, scope);
      const objectIds = tracks.flatMap((t) => t.points.map((p) => p.object_id));
      const replaced = await tx.objectDynamics.deleteMany({
        where:
          'sessionId' in scope
            ? { sessionId: scope.sessionId }
            : { OR: [{ trackId: { in: [...scope.trackIds] } }, { objectId: { in: objectIds } }] },
      });
      const skipped: Array<{ track_id: string; objects: number; reason: string }> = [];
      const data: Prisma.ObjectDynamicsCreateManyInput[] = [];
      for (const t of tracks) {
        const frameOf = new Map(t.points.map((p) => [p.object_id, p.frame_id]));
        const measured = trackDynamics(t.points).filter((d) => d.speed_px_s !== null);
        const unmeasured = t.points.length - measured.length;
        if (t.points.length === 0 || unmeasured > 0)
          skipped.push({
            track_id: t.track_id,
            objects: unmeasured,
            reason: unmeasuredReason(t.points.length),
          });
        for (const d of measured)
          data.push({
            objectId: d.object_id,
            frameId: frameOf.get(d.object_id)!,
            sessionId: t.session_id,
            trackId: t.track_id,
            speedPxS: d.speed_px_s!,
            accelPxS2: d.accel_px_s2,
            headingDeg: d.heading_deg,
            speedMps: d.speed_mps,
            accelMps2: d.accel_mps2,
            rangeM: d.range_m,
            metric: d.metric,
          });
      }
      if (data.length) await tx.objectDynamics.createMany({ data });
      const answer = {
        scope: 'sessionId' in scope ? ('session' as const) : ('tracks' as const),
        session_ids: sessionIds,
        tracks: tracks.length,
        rows_written: data.length,
        rows_replaced: replaced.count,
        metric_rows: data.filter((d) => d.metric).length,
        ranged_rows: data.filter((d) => d.rangeM !== null).length,
        cameras,
        skipped,
      };
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'dynamics.computed',
        subjectType: 'sessionId' in scope ? 'session' : 'tracks',
        subjectId: 'sessionId' in scope ? scope.sessionId : null,
        detail: { ...answer, track_ids: tracks.map((t) => t.track_id) } as Prisma.InputJsonObject,
        requestId: actor.requestId,
      });
      return answer;
    },
    { timeout: 120_000 },
  );
}

export function dynamicsOut(r: ObjectDynamics & { object: { class: { name: string } } }) {
  const { object_id, ...motion } = storedOut(r);
  return {
    object_id,
    frame_id: r.frameId,
    session_id: r.sessionId,
    track_id: r.trackId,
    class_name: r.object.class.name,
    ...motion,
    computed_at: r.computedAt.toISOString(),
  };
}

const withClass = { object: { select: { class: { select: { name: true } } } } } as const;

/** The stored dynamics of a frame's objects. */
export async function frameDynamics(db: Db, frameId: string) {
  const frame = await db.frame.findUnique({ where: { id: frameId }, select: { id: true, sessionId: true } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  const rows = await db.objectDynamics.findMany({
    where: { frameId },
    include: withClass,
    orderBy: { objectId: 'asc' },
  });
  return { frame_id: frameId, session_id: frame.sessionId, count: rows.length, items: rows.map(dynamicsOut) };
}

/** The stored dynamics of one object: 404 when the object is unknown or nothing is stored for it. */
export async function objectDynamics(db: Db, objectId: string) {
  const object = await db.annoObject.findUnique({ where: { id: objectId }, select: { trackId: true } });
  if (!object) throw new NotFoundError(`no object ${objectId}`);
  const row = await db.objectDynamics.findUnique({ where: { objectId }, include: withClass });
  if (!row)
    throw new NotFoundError(
      object.trackId
        ? `no dynamics stored for object ${objectId}: compute them with POST /api/dynamics/compute`
        : `no dynamics for object ${objectId}: it is on no track`,
      { object_id: objectId, track_id: object.trackId },
    );
  return dynamicsOut(row);
}

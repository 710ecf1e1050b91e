import { NotFoundError } from '../../core/errors';
import { TRACKER_VERSION, trackSession, type SessionFrame, type TrackerSettings } from '../../core/tracking';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';

/** Business id of a session's retrack: one at a time per session. */
export const retrackWorkflowId = (sessionId: string): string => `retrack-${sessionId}`;

export interface RetrackInput {
  sessionId: string;
  settings: TrackerSettings;
  actorId: string | null;
}

export interface RetrackOutcome {
  session_id: string;
  tracker_version: string;
  tracks: number;
  objects_tracked: number;
  objects_untracked: number;
  switch_flags: number;
}

/** A session's box objects, frame by frame, as the tracker reads them: rejected ones are not objects of the scene. */
async function sessionFrames(db: Db, sessionId: string): Promise<SessionFrame[]> {
  const frames = await db.frame.findMany({
    where: { sessionId },
    orderBy: { index: 'asc' },
    select: {
      id: true,
      index: true,
      timestampMs: true,
      objects: {
        where: { state: { not: 'rejected' } },
        orderBy: { id: 'asc' },
        select: { id: true, bbox: true, conf: true, class: { select: { name: true } } },
      },
    },
  });
  return frames.map((f) => ({
    frameId: f.id,
    index: f.index,
    tsMs: f.timestampMs,
    objects: f.objects
      .filter((o) => o.bbox.length === 4)
      .map((o) => ({
        objectId: o.id,
        className: o.class.name,
        box: o.bbox as [number, number, number, number],
        score: o.conf ?? 1,
      })),
  }));
}

/**
 * Re-runs association for a session (docs/tracks.md): its tracks are replaced by the tracker's, in
 * one transaction, and each object names its new track. Assigning a track does not edit the label,
 * so objects keep their version.
 */
export async function retrackSession(db: Db, input: RetrackInput): Promise<RetrackOutcome> {
  const session = await db.session.findUnique({ where: { id: input.sessionId }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${input.sessionId}`);
  const frames = await sessionFrames(db, input.sessionId);
  const tracks = trackSession(frames, input.settings);
  const objects = frames.reduce((n, f) => n + f.objects.length, 0);
  const tracked = tracks.reduce((n, t) => n + t.trajectory.length, 0);
  const switches = tracks.reduce((n, t) => n + t.switches.length, 0);
  await db.$transaction(
    async (tx) => {
      // The session's rows are locked first, so two retracks of one session cannot interleave.
      await tx.$queryRaw`SELECT id FROM sessions WHERE id = ${input.sessionId}::uuid FOR UPDATE`;
      await tx.$executeRaw`UPDATE objects o SET track_id = NULL FROM frames f
        WHERE f.id = o.frame_id AND f.session_id = ${input.sessionId}::uuid AND o.track_id IS NOT NULL`;
      await tx.track.deleteMany({ where: { sessionId: input.sessionId } });
      const rows = await tx.track.createManyAndReturn({
        data: tracks.map((t) => ({
          sessionId: input.sessionId,
          trackerVersion: TRACKER_VERSION,
          trajectory: t.trajectory as unknown as Prisma.InputJsonValue,
          idSwitchFlags: t.switches as unknown as Prisma.InputJsonValue,
          attrs: { class_name: t.className, settings: input.settings },
        })),
        select: { id: true },
      });
      const trackIds = rows.flatMap((r, i) => tracks[i]!.trajectory.map(() => r.id));
      const objectIds = tracks.flatMap((t) => t.trajectory.map((p) => p.object_id));
      if (objectIds.length)
        await tx.$executeRaw`UPDATE objects o SET track_id = a.track_id
          FROM unnest(${objectIds}::uuid[], ${trackIds}::uuid[]) AS a(object_id, track_id) WHERE o.id = a.object_id`;
      await recordAudit(tx, {
        actorId: input.actorId,
        action: 'session.retracked',
        subjectType: 'session',
        subjectId: input.sessionId,
        detail: {
          tracker_version: TRACKER_VERSION,
          tracks: tracks.length,
          objects_tracked: tracked,
          settings: input.settings,
        },
      });
    },
    { timeout: 120_000 },
  );
  return {
    session_id: input.sessionId,
    tracker_version: TRACKER_VERSION,
    tracks: tracks.length,
    objects_tracked: tracked,
    objects_untracked: objects - tracked,
    switch_flags: switches,
  };
}

/** A track as the routes show it. */
export function trackOut(t: Prisma.TrackGetPayload<object>) {
  const attrs = t.attrs as { class_name?: string };
  const trajectory = t.trajectory as unknown as Array<{ frame_index: number }>;
  return {
    track_id: t.id,
    session_id: t.sessionId,
    class_name: attrs.class_name ?? null,
    tracker_version: t.trackerVersion,
    length: trajectory.length,
    first_frame_index: trajectory[0]?.frame_index ?? null,
    last_frame_index: trajectory.at(-1)?.frame_index ?? null,
    trajectory: t.trajectory,
    id_switch_flags: t.idSwitchFlags,
    attrs: t.attrs,
    created_at: t.createdAt.toISOString(),
    updated_at: t.updatedAt.toISOString(),
  };
}

/** The activities of RetrackWorkflow, on the `cpu` queue. */
export function createTrackActivities(deps: ActivityDeps) {
  return { retrackSession: (input: RetrackInput) => retrackSession(deps.db, input) };
}

import { NotFoundError } from '../../core/errors';
import {
  DEFAULT_TRACKER_SETTINGS,
  TRACKER_VERSION,
  TrackerSettings,
  trackSession,
  type SessionFrame,
} from '../../core/tracking';
import { carryTrackIds, type OldTrackMember } from '../../core/tracking/carry';
import type { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Tx } from '../annotations/objects';
import type { Db } from '../db';
import { asJsonObject } from './events';
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
  /** New tracks that continue an old one under its id. */
  tracks_continued: number;
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

/** Which track each of the session's objects is in now, and whether a person made it. */
async function oldMembership(db: Tx, sessionId: string): Promise<OldTrackMember[]> {
  const rows = await db.annoObject.findMany({
    where: { frame: { sessionId }, trackId: { not: null } },
    select: { id: true, trackId: true, source: true },
  });
  return rows.map((o) => ({ objectId: o.id, trackId: o.trackId!, human: o.source === 'human' }));
}

/**
 * Re-runs association for a session (docs/tracks.md): the tracker's tracks replace the session's
 * in one transaction, each object names its track, and a new track that continues an old one
 * (carryTrackIds) keeps its id, so what hangs on the id survives a retrack. Assigning a track does
 * not edit the label, so objects keep their version.
 */
export async function retrackSession(db: Db, input: RetrackInput): Promise<RetrackOutcome> {
  const session = await db.session.findUnique({ where: { id: input.sessionId }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${input.sessionId}`);
  const frames = await sessionFrames(db, input.sessionId);
  const tracks = trackSession(frames, input.settings);
  const objects = frames.reduce((n, f) => n + f.objects.length, 0);
  const tracked = tracks.reduce((n, t) => n + t.trajectory.length, 0);
  const switches = tracks.reduce((n, t) => n + t.switches.length, 0);
  const continued = await db.$transaction(
    async (tx) => {
      // The session's rows are locked first, so two retracks of one session cannot interleave.
      await tx.$queryRaw`SELECT id FROM sessions WHERE id = ${input.sessionId}::uuid FOR UPDATE`;
      const carried = carryTrackIds(
        await oldMembership(tx, input.sessionId),
        tracks.map((t) => t.trajectory.map((p) => p.object_id)),
      );
      await tx.$executeRaw`UPDATE objects o SET track_id = NULL FROM frames f
        WHERE f.id = o.frame_id AND f.session_id = ${input.sessionId}::uuid AND o.track_id IS NOT NULL`;
      // Old tracks no new track continues go, with their events; the continued ones keep their id,
      // events and track-level attrs (intent, smoothing), and take the tracker's trajectory.
      const kept = carried.filter((id): id is string => id !== null);
      await tx.track.deleteMany({ where: { sessionId: input.sessionId, id: { notIn: kept } } });
      const previous = new Map(
        (await tx.track.findMany({ where: { id: { in: kept } }, select: { id: true, attrs: true } })).map(
          (t) => [t.id, asJsonObject(t.attrs)],
        ),
      );
      const rowOf = (t: (typeof tracks)[number], oldId: string | null) => ({
        sessionId: input.sessionId,
        trackerVersion: TRACKER_VERSION,
        trajectory: t.trajectory as unknown as Prisma.InputJsonValue,
        idSwitchFlags: t.switches as unknown as Prisma.InputJsonValue,
        attrs: {
          ...(oldId ? previous.get(oldId) : {}),
          class_name: t.className,
          settings: input.settings,
        } as Prisma.InputJsonValue,
      });
      for (const [i, t] of tracks.entries())
        if (carried[i]) await tx.track.update({ where: { id: carried[i]! }, data: rowOf(t, carried[i]!) });
      const fresh = tracks.flatMap((t, i) => (carried[i] ? [] : [{ t, i }]));
      const created = await tx.track.createManyAndReturn({
        data: fresh.map(({ t }) => rowOf(t, null)),
        select: { id: true },
      });
      const idOf = new Map(fresh.map(({ i }, k) => [i, created[k]!.id]));
      const rows = tracks.map((_, i) => ({ id: carried[i] ?? idOf.get(i)! }));
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
          tracks_continued: kept.length,
          objects_tracked: tracked,
          settings: input.settings,
        },
      });
      return kept.length;
    },
    { timeout: 120_000 },
  );
  return {
    session_id: input.sessionId,
    tracker_version: TRACKER_VERSION,
    tracks: tracks.length,
    tracks_continued: continued,
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

/**
 * The retrack after an auto-label run: with the settings the session was last tracked with (a
 * reviewer's choice outlives the run), else the defaults; nobody's request, so no actor.
 */
export async function retrackAfterAutolabel(db: Db, sessionId: string): Promise<RetrackOutcome> {
  const last = await db.track.findFirst({
    where: { sessionId },
    orderBy: { updatedAt: 'desc' },
    select: { attrs: true },
  });
  const stored = TrackerSettings.safeParse(asJsonObject(last?.attrs ?? {}).settings ?? {});
  return retrackSession(db, {
    sessionId,
    settings: stored.success ? stored.data : DEFAULT_TRACKER_SETTINGS,
    actorId: null,
  });
}

/** The activities of RetrackWorkflow and of the auto-label's retrack, on the `cpu` queue. */
export function createTrackActivities(deps: ActivityDeps) {
  return {
    retrackSession: (input: RetrackInput) => retrackSession(deps.db, input),
    retrackAfterAutolabel: (input: { sessionId: string }) => retrackAfterAutolabel(deps.db, input.sessionId),
  };
}

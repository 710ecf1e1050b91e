import { correlateEvents, partitionDetected } from '../../core/ego/correlate';
import {
  detectInertialEvents,
  INERTIAL_EVENT_KINDS,
  INERTIAL_RULES_VERSION,
  type InertialThresholds,
} from '../../core/ego/inertial';
import {
  detectSceneChanges,
  meanLumaOf,
  SCENE_RULES_VERSION,
  type SceneThresholds,
} from '../../core/ego/scene';
import type { TimelineSource } from '../../core/ego/timeline';
import { InputError, NotFoundError, RefusedError } from '../../core/errors';
import type { Prisma, Session, TimelineEvent } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { imuStream, lockSession } from './streams';
import { requireSession } from '../sessions';

type Tx = Db | Prisma.TransactionClient;

export function timelineEventOut(e: TimelineEvent) {
  return {
    event_id: e.id,
    session_id: e.sessionId,
    kind: e.kind,
    t_start_ms: e.tStartMs,
    t_end_ms: e.tEndMs,
    source: e.source,
    label: e.label,
    attrs: e.attrs,
    driving_event_id: e.drivingEventId,
    created_by: e.createdBy,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
export type TimelineEventOut = ReturnType<typeof timelineEventOut>;

export interface TimelineEventIn {
  kind: string;
  t_start_ms: number;
  t_end_ms?: number | null | undefined;
  label?: string | null | undefined;
  attrs: Record<string, unknown>;
}

export type TimelineEventPatch = Partial<TimelineEventIn> & { driving_event_id?: string | null | undefined };

/** Where the drive ends on the frames' clock: its recorded length, or its last frame when later. */
async function driveEndMs(db: Tx, session: Session): Promise<number> {
  const last = await db.frame.findFirst({
    where: { sessionId: session.id },
    orderBy: { timestampMs: 'desc' },
    select: { timestampMs: true },
  });
  const end = Math.max(session.durationMs ?? -Infinity, last?.timestampMs ?? -Infinity);
  if (!Number.isFinite(end))
    throw new RefusedError(
      `session ${session.id} has neither frames nor a recorded length: there is no drive to place an event on`,
    );
  return end;
}

/** An event lies on the drive: 0 ≤ start ≤ end ≤ the drive's end. */
async function checkSpan(db: Tx, session: Session, start: number, end: number | null): Promise<void> {
  if (end !== null && end < start)
    throw new InputError('t_end_ms is before t_start_ms', [
      { field: 'body.t_end_ms', message: 'before t_start_ms' },
    ]);
  const driveEnd = await driveEndMs(db, session);
  const late = Math.max(start, end ?? start);
  if (late > driveEnd)
    throw new InputError(`the event ends at ${late} ms, after the drive (${driveEnd} ms)`, [
      {
        field: end !== null && end > driveEnd ? 'body.t_end_ms' : 'body.t_start_ms',
        message: 'after the drive',
      },
    ]);
}

export async function listTimelineEvents(
  db: Db,
  sessionId: string,
  filter: {
    source?: TimelineSource | undefined;
    kind?: string | undefined;
    from_ms?: number | undefined;
    to_ms?: number | undefined;
    limit: number;
  },
) {
  await requireSession(db, sessionId);
  const where: Prisma.TimelineEventWhereInput = {
    sessionId,
    ...(filter.source ? { source: filter.source } : {}),
    ...(filter.kind ? { kind: filter.kind } : {}),
    ...(filter.to_ms !== undefined ? { tStartMs: { lte: filter.to_ms } } : {}),
    ...(filter.from_ms !== undefined
      ? { OR: [{ tEndMs: { gte: filter.from_ms } }, { tEndMs: null, tStartMs: { gte: filter.from_ms } }] }
      : {}),
  };
  const [events, count] = await Promise.all([
    db.timelineEvent.findMany({ where, orderBy: [{ tStartMs: 'asc' }, { id: 'asc' }], take: filter.limit }),
    db.timelineEvent.count({ where }),
  ]);
  return {
    session_id: sessionId,
    items: events.map(timelineEventOut),
    count,
    truncated: count > events.length,
  };
}

export async function createTimelineEvent(
  db: Db,
  sessionId: string,
  input: TimelineEventIn,
  actor: Actor,
): Promise<TimelineEventOut> {
  return db.$transaction(async (tx) => {
    const session = await lockSession(tx, sessionId, 'share');
    await checkSpan(tx, session, input.t_start_ms, input.t_end_ms ?? null);
    const event = await tx.timelineEvent.create({
      data: {
        sessionId,
        kind: input.kind,
        tStartMs: input.t_start_ms,
        tEndMs: input.t_end_ms ?? null,
        label: input.label ?? null,
        attrs: input.attrs as Prisma.InputJsonObject,
        source: 'human',
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'timeline_event.created',
      subjectType: 'timeline_event',
      subjectId: event.id,
      detail: { session_id: sessionId, kind: event.kind, t_start_ms: event.tStartMs, t_end_ms: event.tEndMs },
      requestId: actor.requestId,
    });
    return timelineEventOut(event);
  });
}

async function lockEvent(tx: Prisma.TransactionClient, eventId: string): Promise<TimelineEvent> {
  // Locked so that two edits of one event cannot both check a span the other changes.
  const locked = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM timeline_events WHERE id = ${eventId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no timeline event ${eventId}`);
  return tx.timelineEvent.findUniqueOrThrow({ where: { id: eventId } });
}

/** Changes the fields given; the span is checked whole again, and a driving event must be of the same session. */
export async function patchTimelineEvent(
  db: Db,
  eventId: string,
  patch: TimelineEventPatch,
  actor: Actor,
): Promise<TimelineEventOut> {
  return db.$transaction(async (tx) => {
    const before = await lockEvent(tx, eventId);
    const session = await tx.session.findUniqueOrThrow({ where: { id: before.sessionId } });
    const start = patch.t_start_ms ?? before.tStartMs;
    const end = patch.t_end_ms === undefined ? before.tEndMs : patch.t_end_ms;
    await checkSpan(tx, session, start, end);
    if (patch.driving_event_id) {
      const driving = await tx.drivingEvent.findUnique({
        where: { id: patch.driving_event_id },
        select: { sessionId: true },
      });
      // One of another session is refused like a missing one: the answer does not tell which sessions hold which.
      if (driving?.sessionId !== before.sessionId)
        throw new InputError(`no driving event ${patch.driving_event_id} in session ${before.sessionId}`, [
          { field: 'body.driving_event_id', message: 'not a driving event of the session' },
        ]);
    }
    const event = await tx.timelineEvent.update({
      where: { id: eventId },
      data: {
        kind: patch.kind ?? before.kind,
        tStartMs: start,
        tEndMs: end,
        ...(patch.label !== undefined ? { label: patch.label } : {}),
        ...(patch.attrs ? { attrs: patch.attrs as Prisma.InputJsonObject } : {}),
        ...(patch.driving_event_id !== undefined ? { drivingEventId: patch.driving_event_id } : {}),
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'timeline_event.updated',
      subjectType: 'timeline_event',
      subjectId: eventId,
      detail: {
        session_id: before.sessionId,
        changed: Object.keys(patch).sort(),
        before: {
          kind: before.kind,
          t_start_ms: before.tStartMs,
          t_end_ms: before.tEndMs,
          label: before.label,
          attrs: before.attrs,
          driving_event_id: before.drivingEventId,
        },
      } as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return timelineEventOut(event);
  });
}

export async function deleteTimelineEvent(db: Db, eventId: string, actor: Actor) {
  return db.$transaction(async (tx) => {
    const event = await lockEvent(tx, eventId);
    await tx.timelineEvent.delete({ where: { id: eventId } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'timeline_event.deleted',
      subjectType: 'timeline_event',
      subjectId: eventId,
      detail: timelineEventOut(event) as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return { event_id: eventId, session_id: event.sessionId, deleted: true as const };
  });
}

interface Detected {
  kind: string;
  tStartMs: number;
  tEndMs: number;
  attrs: Record<string, unknown>;
}

/**
 * Keeps a detector's events as timeline events, all or none: a moment already kept (an event of
 * the same kind, of any source, overlapping it) is not kept again, so a second run adds nothing.
 */
async function keepDetected(
  db: Db,
  sessionId: string,
  source: Exclude<TimelineSource, 'human'>,
  detected: Detected[],
  actor: Actor,
) {
  return db.$transaction(async (tx) => {
    await lockSession(tx, sessionId, 'update');
    const kept = await tx.timelineEvent.findMany({
      where: { sessionId, kind: { in: [...new Set(detected.map((d) => d.kind))] } },
      select: { id: true, kind: true, tStartMs: true, tEndMs: true },
    });
    const { fresh, existing } = partitionDetected(detected, kept);
    const created = await tx.timelineEvent.createManyAndReturn({
      data: fresh.map((d) => ({
        sessionId,
        kind: d.kind,
        tStartMs: d.tStartMs,
        tEndMs: d.tEndMs,
        source,
        attrs: d.attrs as Prisma.InputJsonObject,
        createdBy: actor.userId,
      })),
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: `timeline_event.${source}_kept`,
      subjectType: 'session',
      subjectId: sessionId,
      detail: { detected: detected.length, created: created.length, existing: existing.length },
      requestId: actor.requestId,
    });
    return {
      detected: detected.length,
      created: created.sort((a, b) => a.tStartMs - b.tStartMs).map(timelineEventOut),
      existing: existing.map((e) => ({
        event_id: e.eventId,
        kind: e.detected.kind,
        t_start_ms: e.detected.tStartMs,
        t_end_ms: e.detected.tEndMs,
      })),
    };
  });
}

/** The IMU's inertial events kept as timeline events (source inertial). */
export async function keepInertialEvents(
  db: Db,
  sessionId: string,
  opts: { topic?: string | undefined; thresholds: InertialThresholds },
  actor: Actor,
) {
  await requireSession(db, sessionId);
  const imu = await imuStream(db, sessionId, opts.topic, 'body.topic');
  const detected = detectInertialEvents(imu, opts.thresholds).map(
    ({ kind, t_start_ms, t_end_ms, ...measured }) => ({
      kind,
      tStartMs: t_start_ms,
      tEndMs: t_end_ms,
      attrs: {
        rules_version: INERTIAL_RULES_VERSION,
        topic: imu.topic,
        ...measured,
        thresholds: opts.thresholds,
      },
    }),
  );
  return {
    session_id: sessionId,
    rules_version: INERTIAL_RULES_VERSION,
    topic: imu.topic,
    thresholds: opts.thresholds,
    kinds: INERTIAL_EVENT_KINDS,
    ...(await keepDetected(db, sessionId, 'inertial', detected, actor)),
  };
}

/** Scene changes between consecutive frames kept as timeline events (source scene). */
export async function keepSceneChanges(db: Db, sessionId: string, thresholds: SceneThresholds, actor: Actor) {
  await requireSession(db, sessionId);
  const frames = await db.frame.findMany({
    where: { sessionId },
    select: { id: true, index: true, timestampMs: true, phash: true, context: true },
  });
  if (frames.length < 2)
    throw new RefusedError(
      `session ${sessionId} has ${frames.length} frame(s): a scene change needs two frames`,
    );
  const found = detectSceneChanges(
    frames.map((f) => ({ ...f, meanLuma: meanLumaOf(f.context) })),
    thresholds,
  );
  if (!found.compared)
    throw new RefusedError(
      `no two consecutive frames of session ${sessionId} hold a perceptual hash or an exposure measurement (ingest writes both): there is nothing to compare`,
    );
  const detected = found.changes.map(({ kind, t_start_ms, t_end_ms, ...measured }) => ({
    kind,
    tStartMs: t_start_ms,
    tEndMs: t_end_ms,
    attrs: { rules_version: SCENE_RULES_VERSION, ...measured, thresholds },
  }));
  return {
    session_id: sessionId,
    rules_version: SCENE_RULES_VERSION,
    thresholds,
    frame_pairs: found.pairs,
    pairs_compared: found.compared,
    ...(await keepDetected(db, sessionId, 'scene', detected, actor)),
  };
}

/** Ties the session's timeline events to the driving events they overlap (driving_event_id). */
export async function correlateTimeline(
  db: Db,
  sessionId: string,
  opts: { tolerance_ms: number; replace: boolean },
  actor: Actor,
) {
  return db.$transaction(async (tx) => {
    await lockSession(tx, sessionId, 'update');
    const [events, driving] = await Promise.all([
      tx.timelineEvent.findMany({ where: { sessionId }, orderBy: [{ tStartMs: 'asc' }, { id: 'asc' }] }),
      tx.drivingEvent.findMany({
        where: { sessionId },
        select: { id: true, tStartMs: true, tEndMs: true, state: true },
      }),
    ]);
    const result = correlateEvents(events, driving, {
      toleranceMs: opts.tolerance_ms,
      replace: opts.replace,
    });
    const changed = result.tied.filter((t) => t.previous !== t.drivingEventId);
    for (const t of changed)
      await tx.timelineEvent.update({ where: { id: t.eventId }, data: { drivingEventId: t.drivingEventId } });
    // Re-tying everything (replace) also unties an event that no longer overlaps any driving event.
    const unmatched = new Set(result.unmatched);
    const cleared = events.filter((e) => unmatched.has(e.id) && e.drivingEventId !== null);
    if (cleared.length)
      await tx.timelineEvent.updateMany({
        where: { id: { in: cleared.map((e) => e.id) } },
        data: { drivingEventId: null },
      });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'timeline_event.correlated',
      subjectType: 'session',
      subjectId: sessionId,
      detail: {
        ...opts,
        changed: changed.map((t) => ({
          event_id: t.eventId,
          driving_event_id: t.drivingEventId,
          previous: t.previous,
        })),
        cleared: cleared.map((e) => ({ event_id: e.id, previous: e.drivingEventId })),
      } as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return {
      session_id: sessionId,
      ...opts,
      driving_events: driving.length,
      tied: result.tied.map((t) => ({
        event_id: t.eventId,
        driving_event_id: t.drivingEventId,
        overlap_ms: t.overlapMs,
        previous_driving_event_id: t.previous,
        changed: t.previous !== t.drivingEventId,
      })),
      kept: result.kept,
      unmatched: result.unmatched,
      cleared: cleared.map((e) => e.id),
    };
  });
}

import { contextEgoSpeed } from '../../core/critic';
import {
  DERIVER_VERSION,
  DRIVING_EVENT_KINDS,
  DRIVING_EVENT_SOURCES,
  DRIVING_EVENT_STATES,
  deriveDrivingEvents,
  sameEvent,
  type Derivation,
  type DerivedEvent,
  type DrivingEventKind,
  type EgoSample,
} from '../../core/driving-events';
import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import { decodeCursor, encodeCursor } from '../../core/pagination';
import { Prisma, type DrivingEvent } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { dynamicsForTracks, loadTrackPoints } from '../dynamics';
import { requireSession } from '../sessions';
import { asJsonObject, findTrack } from '../tracks/events';

type Tx = Db | Prisma.TransactionClient;

export function drivingEventOut(e: DrivingEvent) {
  return {
    event_id: e.id,
    session_id: e.sessionId,
    kind: e.kind,
    t_start_ms: e.tStartMs,
    t_end_ms: e.tEndMs,
    start_frame_id: e.startFrame,
    end_frame_id: e.endFrame,
    state: e.state,
    source: e.source,
    track_ids: e.trackIds,
    classes: e.classes,
    confidence: e.confidence,
    evidence: e.evidence,
    deriver_version: e.deriverVersion,
    reviewed_by: e.reviewedBy,
    reviewed_at: e.reviewedAt?.toISOString() ?? null,
    review_note: e.reviewNote,
    created_by: e.createdBy,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
export type DrivingEventOut = ReturnType<typeof drivingEventOut>;

/** Runs the taxonomy's rules over the session's tracks, stored (or computed) dynamics, ego speed and IMU events. */
async function derive(db: Tx, sessionId: string): Promise<Derivation> {
  const { tracks } = await loadTrackPoints(db, { sessionId });
  const dynamics = await dynamicsForTracks(db, tracks);
  const frames = await db.frame.findMany({
    where: { sessionId },
    select: { id: true, timestampMs: true, context: true },
    orderBy: { index: 'asc' },
  });
  const ego: EgoSample[] = frames.flatMap((f) => {
    const speed = contextEgoSpeed(f.context);
    return speed === null ? [] : [{ frame_id: f.id, ts_ms: f.timestampMs, speed_mps: speed }];
  });
  const inertial = await db.timelineEvent.findMany({
    where: { sessionId, source: 'inertial' },
    orderBy: [{ tStartMs: 'asc' }, { id: 'asc' }],
  });
  return deriveDrivingEvents({
    tracks: tracks.map((t, i) => ({
      track_id: t.track_id,
      points: t.points,
      dynamics: dynamics[i]!.dynamics,
      dynamics_from: dynamics[i]!.from,
    })),
    ego,
    inertial: inertial.map((e) => ({
      id: e.id,
      kind: e.kind,
      t_start_ms: e.tStartMs,
      t_end_ms: e.tEndMs,
      attrs: asJsonObject(e.attrs),
    })),
  });
}

const asComparable = (e: DrivingEvent) => ({
  kind: e.kind,
  t_start_ms: e.tStartMs,
  t_end_ms: e.tEndMs,
  track_ids: e.trackIds,
});

/** The kept event (a reviewer's decision, or a person's event) a derived one repeats, if any. */
const keptMatch = (d: DerivedEvent, kept: readonly DrivingEvent[]) =>
  kept.find((k) => sameEvent(d, asComparable(k))) ?? null;

const derivedOut = (d: DerivedEvent, match: DrivingEvent | null) => ({
  kind: d.kind,
  t_start_ms: d.t_start_ms,
  t_end_ms: d.t_end_ms,
  start_frame_id: d.start_frame,
  end_frame_id: d.end_frame,
  track_ids: d.track_ids,
  classes: d.classes,
  evidence: d.evidence,
  suppressed_by: match ? { event_id: match.id, state: match.state, source: match.source } : null,
});

/** Rows a re-derivation keeps: everything but the deriver's own undecided proposals. */
const keptWhere = (sessionId: string): Prisma.DrivingEventWhereInput => ({
  sessionId,
  NOT: { source: 'derived', state: 'proposed' },
});

/** What derive would write, and what it would not re-propose; stores nothing. */
export async function previewDrivingEvents(db: Db, sessionId: string) {
  await requireSession(db, sessionId);
  const derivation = await derive(db, sessionId);
  const kept = await db.drivingEvent.findMany({ where: keptWhere(sessionId) });
  const events = derivation.events.map((d) => derivedOut(d, keptMatch(d, kept)));
  return {
    session_id: sessionId,
    deriver_version: derivation.deriver_version,
    ran: derivation.ran,
    skipped: derivation.skipped,
    count: events.length,
    would_write: events.filter((e) => !e.suppressed_by).length,
    events,
  };
}

/**
 * Derives and stores the session's events in one transaction under the session's row lock:
 * the deriver's undecided proposals are replaced; confirmed, rejected and human events stay, and a
 * derived event that repeats one of them (same kind, overlapping span, same tracks) is not
 * proposed again. Audited.
 */
export async function deriveAndStoreDrivingEvents(db: Db, sessionId: string, actor: Actor) {
  return db.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT id::text FROM sessions WHERE id = ${sessionId}::uuid FOR UPDATE`;
      if (!locked.length) throw new NotFoundError(`no session ${sessionId}`);
      const derivation = await derive(tx, sessionId);
      const replaced = await tx.drivingEvent.deleteMany({
        where: { sessionId, source: 'derived', state: 'proposed' },
      });
      const kept = await tx.drivingEvent.findMany({ where: keptWhere(sessionId) });
      const fresh = derivation.events.filter((d) => !keptMatch(d, kept));
      const suppressed = derivation.events.flatMap((d) => {
        const match = keptMatch(d, kept);
        return match ? [derivedOut(d, match)] : [];
      });
      const written = await tx.drivingEvent.createManyAndReturn({
        data: fresh.map((d) => ({
          sessionId,
          kind: d.kind,
          tStartMs: d.t_start_ms,
          tEndMs: d.t_end_ms,
          startFrame: d.start_frame,
          endFrame: d.end_frame,
          state: 'proposed',
          source: 'derived',
          trackIds: d.track_ids,
          classes: d.classes,
          evidence: d.evidence as Prisma.InputJsonObject,
          deriverVersion: derivation.deriver_version,
          createdBy: actor.userId,
        })),
      });
      const counts = { written: written.length, replaced: replaced.count, suppressed: suppressed.length };
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'driving_events.derived',
        subjectType: 'session',
        subjectId: sessionId,
        detail: {
          deriver_version: DERIVER_VERSION,
          ...counts,
          skipped: derivation.skipped,
        } as Prisma.InputJsonObject,
        requestId: actor.requestId,
      });
      written.sort((a, b) => a.tStartMs - b.tStartMs || a.kind.localeCompare(b.kind));
      return {
        session_id: sessionId,
        deriver_version: derivation.deriver_version,
        ran: derivation.ran,
        skipped: derivation.skipped,
        ...counts,
        items: written.map(drivingEventOut),
        suppressed_events: suppressed,
      };
    },
    { timeout: 120_000 },
  );
}

export interface HumanEventIn {
  kind: DrivingEventKind;
  t_start_ms?: number | undefined;
  t_end_ms?: number | undefined;
  start_frame_id?: string | undefined;
  end_frame_id?: string | undefined;
  track_ids: string[];
  note?: string | undefined;
}

/** The span of a person's event: from two frames of the session (start ≤ end by index), or the times given. */
async function humanSpan(db: Tx, sessionId: string, input: HumanEventIn) {
  if (input.start_frame_id === undefined || input.end_frame_id === undefined)
    return { tStartMs: input.t_start_ms!, tEndMs: input.t_end_ms!, startFrame: null, endFrame: null };
  const frames = await db.frame.findMany({
    where: { id: { in: [input.start_frame_id, input.end_frame_id] }, sessionId },
    select: { id: true, index: true, timestampMs: true },
  });
  const start = frames.find((f) => f.id === input.start_frame_id);
  const end = frames.find((f) => f.id === input.end_frame_id);
  const notHere = (field: string) =>
    new InputError(`${field} is not a frame of session ${sessionId}`, [
      { field: `body.${field}`, message: 'not a frame of this session' },
    ]);
  if (!start) throw notHere('start_frame_id');
  if (!end) throw notHere('end_frame_id');
  if (end.index < start.index)
    throw new InputError('the event ends before it starts', [
      { field: 'body.end_frame_id', message: 'before the start frame' },
    ]);
  return { tStartMs: start.timestampMs, tEndMs: end.timestampMs, startFrame: start.id, endFrame: end.id };
}

/** A person's event (source human, proposed until a reviewer decides); its classes are its tracks' objects'. Audited. */
export async function createHumanDrivingEvent(db: Db, sessionId: string, input: HumanEventIn, actor: Actor) {
  return db.$transaction(async (tx) => {
    await requireSession(tx, sessionId);
    const span = await humanSpan(tx, sessionId, input);
    const trackIds = [...new Set(input.track_ids)];
    const tracks = await tx.track.findMany({
      where: { id: { in: trackIds }, sessionId },
      select: { id: true },
    });
    const foreign = trackIds.filter((id) => !tracks.some((t) => t.id === id));
    if (foreign.length)
      throw new InputError(`not tracks of session ${sessionId}: ${foreign.join(', ')}`, [
        { field: 'body.track_ids', message: 'not a track of this session' },
      ]);
    const classes = await tx.annoObject.findMany({
      where: { trackId: { in: trackIds }, state: { not: 'rejected' } },
      distinct: ['classId'],
      select: { class: { select: { name: true } } },
    });
    const event = await tx.drivingEvent.create({
      data: {
        sessionId,
        kind: input.kind,
        ...span,
        state: 'proposed',
        source: 'human',
        trackIds,
        classes: [...new Set(classes.map((c) => c.class.name))].sort(),
        evidence: input.note ? { note: input.note } : {},
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'driving_event.created',
      subjectType: 'driving_event',
      subjectId: event.id,
      detail: { session_id: sessionId, kind: event.kind, track_ids: trackIds },
      requestId: actor.requestId,
    });
    return drivingEventOut(event);
  });
}

/**
 * A reviewer confirms or rejects an event, with an optional note. Deciding again the way it is
 * decided is a 409; the other decision replaces it (audited with what it was).
 */
export async function reviewDrivingEvent(
  db: Db,
  eventId: string,
  decision: 'confirmed' | 'rejected',
  note: string | undefined,
  actor: Actor,
) {
  return db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id::text FROM driving_events WHERE id = ${eventId}::uuid FOR UPDATE`;
    if (!locked.length) throw new NotFoundError(`no driving event ${eventId}`);
    const before = await tx.drivingEvent.findUniqueOrThrow({ where: { id: eventId } });
    if (before.state === decision)
      throw new ConflictError(`driving event ${eventId} is already ${decision}`, {
        state: before.state,
        reviewed_by: before.reviewedBy,
        reviewed_at: before.reviewedAt?.toISOString() ?? null,
      });
    const event = await tx.drivingEvent.update({
      where: { id: eventId },
      data: { state: decision, reviewedBy: actor.userId, reviewedAt: new Date(), reviewNote: note ?? null },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: `driving_event.${decision}`,
      subjectType: 'driving_event',
      subjectId: eventId,
      detail: {
        session_id: event.sessionId,
        kind: event.kind,
        previous_state: before.state,
        note: note ?? null,
      },
      requestId: actor.requestId,
    });
    return drivingEventOut(event);
  });
}

export interface ListFilter {
  kind?: string | undefined;
  state?: string | undefined;
  source?: string | undefined;
  limit: number;
}

const filterWhere = (f: ListFilter): Prisma.DrivingEventWhereInput => ({
  ...(f.kind ? { kind: f.kind } : {}),
  ...(f.state ? { state: f.state } : {}),
  ...(f.source ? { source: f.source } : {}),
});

/** Events in time order (start, then end, then id), up to `limit`, with the full count. */
async function listInTimeOrder(db: Db, where: Prisma.DrivingEventWhereInput, limit: number) {
  const [rows, count] = await Promise.all([
    db.drivingEvent.findMany({
      where,
      orderBy: [{ tStartMs: 'asc' }, { tEndMs: 'asc' }, { id: 'asc' }],
      take: limit,
    }),
    db.drivingEvent.count({ where }),
  ]);
  return { items: rows.map(drivingEventOut), count, truncated: count > rows.length };
}

export async function listSessionDrivingEvents(db: Db, sessionId: string, filter: ListFilter) {
  await requireSession(db, sessionId);
  return {
    session_id: sessionId,
    ...(await listInTimeOrder(db, { sessionId, ...filterWhere(filter) }, filter.limit)),
  };
}

export async function listTrackDrivingEvents(db: Db, trackId: string, filter: ListFilter) {
  const track = await findTrack(db, trackId);
  return {
    track_id: trackId,
    session_id: track.sessionId,
    ...(await listInTimeOrder(db, { trackIds: { has: trackId }, ...filterWhere(filter) }, filter.limit)),
  };
}

export interface SearchQuery {
  kind?: string | undefined;
  session_id?: string | undefined;
  state?: string | undefined;
  source?: string | undefined;
  class?: string | undefined;
  t_from_ms?: number | undefined;
  t_to_ms?: number | undefined;
  created_from?: string | undefined;
  created_to?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * Events across the corpus, newest first, by keyset on (created_at, id) as the other list routes
 * page (core/pagination.ts); filters combine with AND. A time range selects events whose span
 * overlaps it; a created range is [created_from, created_to).
 */
export async function searchDrivingEvents(db: Db, q: SearchQuery) {
  const conds: Prisma.Sql[] = [];
  if (q.kind) conds.push(Prisma.sql`kind = ${q.kind}`);
  if (q.session_id) conds.push(Prisma.sql`session_id = ${q.session_id}::uuid`);
  if (q.state) conds.push(Prisma.sql`state = ${q.state}`);
  if (q.source) conds.push(Prisma.sql`source = ${q.source}`);
  if (q.class) conds.push(Prisma.sql`${q.class} = ANY(classes)`);
  if (q.t_from_ms !== undefined) conds.push(Prisma.sql`t_end_ms >= ${q.t_from_ms}`);
  if (q.t_to_ms !== undefined) conds.push(Prisma.sql`t_start_ms <= ${q.t_to_ms}`);
  if (q.created_from) conds.push(Prisma.sql`created_at >= ${q.created_from}::timestamptz`);
  if (q.created_to) conds.push(Prisma.sql`created_at < ${q.created_to}::timestamptz`);
  if (q.cursor) {
    const after = decodeCursor(q.cursor);
    conds.push(Prisma.sql`(created_at, id) < (${after.createdAt}::timestamptz, ${after.id}::uuid)`);
  }
  // The key is read as text with microseconds: a Date would round it to milliseconds.
  const keys = await db.$queryRaw<Array<{ id: string; key_at: string }>>`
    SELECT id::text, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM driving_events
     ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}
     ORDER BY created_at DESC, id DESC
     LIMIT ${q.limit + 1}`;
  const page = keys.slice(0, q.limit);
  const rows = new Map(
    (await db.drivingEvent.findMany({ where: { id: { in: page.map((k) => k.id) } } })).map((r) => [r.id, r]),
  );
  const last = page.at(-1);
  return {
    items: page.flatMap((k) => (rows.has(k.id) ? [drivingEventOut(rows.get(k.id)!)] : [])),
    limit: q.limit,
    next_cursor: keys.length > q.limit && last ? encodeCursor({ createdAt: last.key_at, id: last.id }) : null,
  };
}

const zeros = <K extends string>(keys: readonly K[]): Record<K, number> =>
  Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

/** Counts per kind and state (every kind and state named, zeros included), per state and per source. */
async function counts(db: Db, where: Prisma.DrivingEventWhereInput) {
  const groups = await db.drivingEvent.groupBy({
    by: ['kind', 'state', 'source'],
    where,
    _count: { _all: true },
  });
  const byKind: Record<string, Record<string, number>> = Object.fromEntries(
    DRIVING_EVENT_KINDS.map((k) => [k, { total: 0, ...zeros(DRIVING_EVENT_STATES) }]),
  );
  const byState: Record<string, number> = zeros(DRIVING_EVENT_STATES);
  const bySource: Record<string, number> = zeros(DRIVING_EVENT_SOURCES);
  let total = 0;
  for (const g of groups) {
    const n = g._count._all;
    const kind = (byKind[g.kind] ??= { total: 0, ...zeros(DRIVING_EVENT_STATES) });
    kind.total = (kind.total ?? 0) + n;
    kind[g.state] = (kind[g.state] ?? 0) + n;
    byState[g.state] = (byState[g.state] ?? 0) + n;
    bySource[g.source] = (bySource[g.source] ?? 0) + n;
    total += n;
  }
  return { total, by_state: byState, by_source: bySource, by_kind: byKind };
}

export async function sessionDrivingEventSummary(db: Db, sessionId: string) {
  await requireSession(db, sessionId);
  return { session_id: sessionId, ...(await counts(db, { sessionId })) };
}

export async function corpusDrivingEventSummary(db: Db) {
  const [summary, sessions] = await Promise.all([
    counts(db, {}),
    db.drivingEvent.groupBy({ by: ['sessionId'], _count: { _all: true } }),
  ]);
  return { sessions: sessions.length, ...summary };
}

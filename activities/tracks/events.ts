import { InputError, NotFoundError } from '../../core/errors';
import { resolveEventSpan, type EventSpan, type TrackEventKind } from '../../core/tracking/events';
import { attributeTimeline, type AttributeTimeline } from '../../core/tracking/timeline';
import type { Prisma, Track, TrackEvent } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

type Tx = Db | Prisma.TransactionClient;

/** A JSON column that should hold an object; anything else reads as empty rather than failing. */
export const asJsonObject = (value: Prisma.JsonValue): Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value) ? value : {};

export async function findTrack(db: Tx, trackId: string): Promise<Track> {
  const track = await db.track.findUnique({ where: { id: trackId } });
  if (!track) throw new NotFoundError(`no track ${trackId}`);
  return track;
}

/**
 * The track, its row locked for the rest of the transaction: `share` while an event is added (a
 * retrack or delete cannot remove the track under it), `update` while its attrs are rewritten.
 */
export async function lockTrack(
  tx: Prisma.TransactionClient,
  trackId: string,
  mode: 'share' | 'update',
): Promise<Track> {
  const locked =
    mode === 'share'
      ? await tx.$queryRaw<Array<{ id: string }>>`SELECT id FROM tracks WHERE id = ${trackId}::uuid FOR SHARE`
      : await tx.$queryRaw<
          Array<{ id: string }>
        >`SELECT id FROM tracks WHERE id = ${trackId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no track ${trackId}`);
  return tx.track.findUniqueOrThrow({ where: { id: trackId } });
}

export interface TrackEventIn {
  kind: TrackEventKind;
  start_frame_id: string;
  end_frame_id: string;
  attrs: Record<string, unknown>;
}

export type TrackEventPatch = Partial<TrackEventIn>;

async function spanOf(db: Tx, track: Track, start: string, end: string): Promise<EventSpan> {
  const frames = await db.frame.findMany({
    where: { id: { in: [start, end] } },
    select: { id: true, sessionId: true, index: true },
  });
  return resolveEventSpan(track.sessionId, start, end, frames);
}

/** Frame indexes of the events' spans, one query for all of them. */
async function frameIndexes(db: Tx, events: readonly TrackEvent[]): Promise<Map<string, number>> {
  const ids = [...new Set(events.flatMap((e) => [e.startFrame, e.endFrame]).filter((id) => id !== null))];
  if (!ids.length) return new Map();
  const frames = await db.frame.findMany({ where: { id: { in: ids } }, select: { id: true, index: true } });
  return new Map(frames.map((f) => [f.id, f.index]));
}

function eventOut(e: TrackEvent, indexOf: ReadonlyMap<string, number>) {
  const at = (id: string | null) => (id === null ? null : (indexOf.get(id) ?? null));
  return {
    event_id: e.id,
    track_id: e.trackId,
    kind: e.kind,
    start_frame_id: e.startFrame,
    end_frame_id: e.endFrame,
    start_frame_index: at(e.startFrame),
    end_frame_index: at(e.endFrame),
    attrs: e.attrs,
    source: e.source,
    created_by: e.createdBy,
    created_at: e.createdAt.toISOString(),
    updated_at: e.updatedAt.toISOString(),
  };
}
export type TrackEventOut = ReturnType<typeof eventOut>;

const spanIndexes = (span: EventSpan) =>
  new Map([
    [span.startFrameId, span.startIndex],
    [span.endFrameId, span.endIndex],
  ]);

/** A track's events ordered by where they start (events without a span last), then by creation. */
export async function listTrackEvents(
  db: Db,
  trackId: string,
  filter: { kind?: string | undefined; limit: number },
): Promise<{ track_id: string; items: TrackEventOut[]; count: number; truncated: boolean }> {
  await findTrack(db, trackId);
  const events = await db.trackEvent.findMany({
    where: { trackId, ...(filter.kind ? { kind: filter.kind } : {}) },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  const indexOf = await frameIndexes(db, events);
  const items = events
    .map((e) => eventOut(e, indexOf))
    .sort((a, b) => (a.start_frame_index ?? Infinity) - (b.start_frame_index ?? Infinity));
  return {
    track_id: trackId,
    items: items.slice(0, filter.limit),
    count: items.length,
    truncated: items.length > filter.limit,
  };
}

export async function createTrackEvent(
  db: Db,
  trackId: string,
  input: TrackEventIn,
  actor: Actor,
): Promise<TrackEventOut> {
  return db.$transaction(async (tx) => {
    const track = await lockTrack(tx, trackId, 'share');
    const span = await spanOf(tx, track, input.start_frame_id, input.end_frame_id);
    const event = await tx.trackEvent.create({
      data: {
        trackId,
        kind: input.kind,
        startFrame: span.startFrameId,
        endFrame: span.endFrameId,
        attrs: input.attrs as Prisma.InputJsonObject,
        source: 'human',
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'track_event.created',
      subjectType: 'track_event',
      subjectId: event.id,
      detail: {
        track_id: trackId,
        kind: event.kind,
        start_frame_index: span.startIndex,
        end_frame_index: span.endIndex,
      },
      requestId: actor.requestId,
    });
    return eventOut(event, spanIndexes(span));
  });
}

async function lockEvent(tx: Prisma.TransactionClient, eventId: string): Promise<TrackEvent> {
  // The row is locked so that two edits of one event cannot both check a span the other changes.
  const locked = await tx.$queryRaw<
    Array<{ id: string }>
  >`SELECT id FROM track_events WHERE id = ${eventId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no track event ${eventId}`);
  return tx.trackEvent.findUniqueOrThrow({ where: { id: eventId } });
}

/** Changes the fields given; a span that moves is checked whole, start and end together. */
export async function patchTrackEvent(
  db: Db,
  eventId: string,
  patch: TrackEventPatch,
  actor: Actor,
): Promise<TrackEventOut> {
  return db.$transaction(async (tx) => {
    const before = await lockEvent(tx, eventId);
    const track = await findTrack(tx, before.trackId);
    const start = patch.start_frame_id ?? before.startFrame;
    const end = patch.end_frame_id ?? before.endFrame;
    if (start === null || end === null)
      throw new InputError('the event has no span: give both start_frame_id and end_frame_id', [
        { field: start === null ? 'body.start_frame_id' : 'body.end_frame_id', message: 'required' },
      ]);
    const span = await spanOf(tx, track, start, end);
    const event = await tx.trackEvent.update({
      where: { id: eventId },
      data: {
        kind: patch.kind ?? before.kind,
        startFrame: span.startFrameId,
        endFrame: span.endFrameId,
        ...(patch.attrs ? { attrs: patch.attrs as Prisma.InputJsonObject } : {}),
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'track_event.updated',
      subjectType: 'track_event',
      subjectId: eventId,
      detail: {
        track_id: before.trackId,
        changed: Object.keys(patch).sort(),
        before: {
          kind: before.kind,
          start_frame: before.startFrame,
          end_frame: before.endFrame,
          attrs: before.attrs,
        },
      } as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return eventOut(event, spanIndexes(span));
  });
}

export async function deleteTrackEvent(
  db: Db,
  eventId: string,
  actor: Actor,
): Promise<{ event_id: string; track_id: string; deleted: true }> {
  return db.$transaction(async (tx) => {
    const event = await lockEvent(tx, eventId);
    await tx.trackEvent.delete({ where: { id: eventId } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'track_event.deleted',
      subjectType: 'track_event',
      subjectId: eventId,
      detail: {
        track_id: event.trackId,
        kind: event.kind,
        start_frame: event.startFrame,
        end_frame: event.endFrame,
        attrs: event.attrs,
      } as Prisma.InputJsonObject,
      requestId: actor.requestId,
    });
    return { event_id: eventId, track_id: event.trackId, deleted: true };
  });
}

/**
 * The attribute timeline of a track from the objects linked to it now (not the trajectory retrack
 * stored, which does not follow later edits of the objects).
 */
export async function trackAttributeTimeline(
  db: Db,
  trackId: string,
): Promise<{ track_id: string; session_id: string } & AttributeTimeline> {
  const track = await findTrack(db, trackId);
  const objects = await db.annoObject.findMany({
    where: { trackId },
    select: {
      id: true,
      attrs: true,
      state: true,
      class: { select: { name: true } },
      frame: { select: { id: true, index: true, timestampMs: true } },
    },
  });
  const timeline = attributeTimeline(
    objects.map((o) => ({
      frame_id: o.frame.id,
      frame_index: o.frame.index,
      ts_ms: o.frame.timestampMs,
      object_id: o.id,
      class_name: o.class.name,
      state: o.state,
      attrs: asJsonObject(o.attrs),
    })),
  );
  return { track_id: track.id, session_id: track.sessionId, ...timeline };
}

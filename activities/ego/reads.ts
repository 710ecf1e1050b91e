import { contextEgoSpeed } from '../../core/critic';
import { qaConsistency, type QaThresholds } from '../../core/ego/consistency';
import {
  detectInertialEvents,
  INERTIAL_EVENT_KINDS,
  INERTIAL_RULES_VERSION,
  type InertialThresholds,
} from '../../core/ego/inertial';
import {
  chooseSpeedStream,
  interpolateAt,
  summarizeStream,
  type EgoKind,
  type EgoStreamData,
} from '../../core/ego/streams';
import { frameRange, inWindow } from '../../core/ego/timeline';
import type { Db } from '../db';
import { imuStream, loadEgoStreams } from './streams';
import { requireSession } from '../sessions';

async function sessionFrames(db: Db, sessionId: string) {
  return db.frame.findMany({
    where: { sessionId },
    orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
    select: { id: true, index: true, timestampMs: true, context: true },
  });
}

/** Samples of [from, to] (either end open), at most `limit`. */
function samplesWithin(s: EgoStreamData, from: number | undefined, to: number | undefined, limit: number) {
  const inside = s.tMs.flatMap((t, i) =>
    (from === undefined || t >= from) && (to === undefined || t <= to) ? [i] : [],
  );
  const taken = inside.slice(0, limit);
  return {
    t_ms: taken.map((i) => s.tMs[i]!),
    channels: Object.fromEntries(
      Object.entries(s.channels).map(([name, values]) => [name, taken.map((i) => values[i] ?? null)]),
    ),
    count: inside.length,
    truncated: inside.length > limit,
  };
}

export interface EgoStateQuery {
  kind?: EgoKind | undefined;
  topic?: string | undefined;
  at_ms?: number | undefined;
  samples: boolean;
  from_ms?: number | undefined;
  to_ms?: number | undefined;
  limit: number;
}

/**
 * The session's ego streams: each one's span, rate and per-channel statistics; the channels at one
 * time (`at_ms`, interpolated, null outside the stream); the samples of a window on request; and
 * which speed stream the frames' ego speed comes from.
 */
export async function egoState(db: Db, sessionId: string, q: EgoStateQuery) {
  await requireSession(db, sessionId);
  const [all, frames] = await Promise.all([loadEgoStreams(db, sessionId), sessionFrames(db, sessionId)]);
  const speedStream = chooseSpeedStream(
    all,
    frames.map((f) => f.timestampMs),
  );
  const streams = all.filter((s) => (!q.kind || s.kind === q.kind) && (!q.topic || s.topic === q.topic));
  return {
    session_id: sessionId,
    streams: streams.map((s) => ({
      stream_id: s.id,
      ...summarizeStream(s),
      ...(q.at_ms === undefined
        ? {}
        : {
            at: {
              t_ms: q.at_ms,
              values: Object.fromEntries(
                Object.entries(s.channels).map(([name, values]) => [
                  name,
                  interpolateAt(s.tMs, values, q.at_ms!),
                ]),
              ),
            },
          }),
      ...(q.samples ? { data: samplesWithin(s, q.from_ms, q.to_ms, q.limit) } : {}),
    })),
    frames: {
      count: frames.length,
      with_ego_speed: frames.filter((f) => contextEgoSpeed(f.context) !== null).length,
      speed_topic: speedStream?.topic ?? null,
    },
  };
}

/** Inertial events of the session's IMU, derived on read with the given thresholds (nothing stored). */
export async function inertialEvents(
  db: Db,
  sessionId: string,
  opts: { topic?: string | undefined; kind?: string | undefined; thresholds: InertialThresholds },
) {
  await requireSession(db, sessionId);
  const imu = await imuStream(db, sessionId, opts.topic, 'query.topic');
  const events = detectInertialEvents(imu, opts.thresholds).filter((e) => !opts.kind || e.kind === opts.kind);
  const summary = summarizeStream(imu);
  return {
    session_id: sessionId,
    rules_version: INERTIAL_RULES_VERSION,
    imu: {
      topic: imu.topic,
      message_type: imu.messageType,
      samples: summary.samples,
      t_start_ms: summary.t_start_ms,
      t_end_ms: summary.t_end_ms,
      rate_hz: summary.rate_hz,
    },
    thresholds: opts.thresholds,
    kinds: INERTIAL_EVENT_KINDS,
    count: events.length,
    events,
  };
}

/**
 * The session's timeline: the drive's span, the frames' span, each ego stream's span, and its
 * timeline events and driving events in time order, each with the frames it shows.
 */
export async function sessionTimeline(
  db: Db,
  sessionId: string,
  q: { from_ms?: number | undefined; to_ms?: number | undefined; include_rejected: boolean },
) {
  const session = await requireSession(db, sessionId);
  const [frames, streams, events, driving] = await Promise.all([
    db.frame.findMany({
      where: { sessionId },
      orderBy: [{ timestampMs: 'asc' }, { index: 'asc' }],
      select: { index: true, timestampMs: true },
    }),
    // Only the spans: the samples stay in the database.
    db.$queryRaw<
      Array<{
        kind: string;
        topic: string;
        samples: number;
        t_start_ms: number | null;
        t_end_ms: number | null;
      }>
    >`
      SELECT kind, topic, coalesce(array_length(t_ms, 1), 0)::int AS samples,
             t_ms[1] AS t_start_ms, t_ms[array_length(t_ms, 1)] AS t_end_ms
        FROM ego_streams WHERE session_id = ${sessionId}::uuid ORDER BY kind, topic`,
    db.timelineEvent.findMany({ where: { sessionId }, orderBy: [{ tStartMs: 'asc' }, { id: 'asc' }] }),
    db.drivingEvent.findMany({
      where: { sessionId, ...(q.include_rejected ? {} : { state: { not: 'rejected' } }) },
      orderBy: [{ tStartMs: 'asc' }, { id: 'asc' }],
    }),
  ]);
  const tiedTo = new Map<string, string[]>();
  for (const e of events)
    if (e.drivingEventId) tiedTo.set(e.drivingEventId, [...(tiedTo.get(e.drivingEventId) ?? []), e.id]);
  const items = [
    ...events.map((e) => ({
      type: 'timeline_event' as const,
      id: e.id,
      kind: e.kind,
      source: e.source,
      t_start_ms: e.tStartMs,
      t_end_ms: e.tEndMs,
      label: e.label,
      driving_event_id: e.drivingEventId,
      frames: frameRange(frames, e),
    })),
    ...driving.map((d) => ({
      type: 'driving_event' as const,
      id: d.id,
      kind: d.kind,
      source: d.source,
      state: d.state,
      t_start_ms: d.tStartMs,
      t_end_ms: d.tEndMs as number | null,
      timeline_event_ids: tiedTo.get(d.id) ?? [],
      frames: frameRange(frames, d),
    })),
  ]
    .filter((i) => inWindow({ tStartMs: i.t_start_ms, tEndMs: i.t_end_ms }, q.from_ms, q.to_ms))
    .sort((a, b) => a.t_start_ms - b.t_start_ms || a.type.localeCompare(b.type) || a.id.localeCompare(b.id));
  return {
    session_id: sessionId,
    duration_ms: session.durationMs,
    frames: {
      count: frames.length,
      t_start_ms: frames[0]?.timestampMs ?? null,
      t_end_ms: frames[frames.length - 1]?.timestampMs ?? null,
    },
    streams,
    count: items.length,
    items,
  };
}

interface TrajectoryPoint {
  frame_id?: unknown;
  ts_ms?: unknown;
}

/** The consistency checks of core/ego/consistency.ts over what the session holds now. */
export async function sessionConsistency(db: Db, sessionId: string, thresholds: QaThresholds) {
  await requireSession(db, sessionId);
  const [frames, streams, events, tracks] = await Promise.all([
    sessionFrames(db, sessionId),
    loadEgoStreams(db, sessionId),
    db.timelineEvent.findMany({ where: { sessionId } }),
    db.track.findMany({ where: { sessionId }, select: { id: true, trajectory: true } }),
  ]);
  const tied = [...new Set(events.flatMap((e) => (e.drivingEventId ? [e.drivingEventId] : [])))];
  const driving = await db.drivingEvent.findMany({
    where: { id: { in: tied }, sessionId },
    select: { id: true, tStartMs: true, tEndMs: true, state: true },
  });
  const result = qaConsistency(
    {
      frames: frames.map((f) => ({ ...f, egoSpeed: contextEgoSpeed(f.context) })),
      streams,
      events,
      driving,
      tracks: tracks.map((t) => ({
        id: t.id,
        points: (Array.isArray(t.trajectory) ? (t.trajectory as TrajectoryPoint[]) : []).map((p) => ({
          frameId: typeof p.frame_id === 'string' ? p.frame_id : null,
          tsMs: typeof p.ts_ms === 'number' ? p.ts_ms : null,
        })),
      })),
    },
    thresholds,
  );
  return { session_id: sessionId, thresholds, ...result };
}

import { overlapMs, type DrivingSpan, type TimelineSpan } from './correlate';
import { chooseSpeedStream, coverageOf, speedsAt, streamGaps, type EgoStreamData } from './streams';

/**
 * The consistency checks of a session's ego state and timeline (docs/ego-state.md "Consistency"),
 * each passing, failing with the offending items, or skipped with the reason.
 */
export interface QaThresholds {
  /** A stream (imu, speed) may go this long without a sample (ms). */
  max_gap_ms: number;
  /** Share of the frames' time span each stream must cover. */
  min_coverage: number;
  /** A frame's stored ego speed may differ from its stream's value at the frame by this much (m/s). */
  speed_tolerance_mps: number;
  /** A trajectory point's time may differ from its frame's by this much (ms). */
  track_time_tolerance_ms: number;
}

export const DEFAULT_QA_THRESHOLDS: QaThresholds = {
  max_gap_ms: 500,
  min_coverage: 0.95,
  speed_tolerance_mps: 0.01,
  track_time_tolerance_ms: 1,
};

export const QA_CHECKS = [
  'ego_coverage',
  'stream_gaps',
  'frame_speed',
  'events_in_frames',
  'correlations',
  'tracks_on_frames',
] as const;
export type QaCheckName = (typeof QA_CHECKS)[number];

/** Issues listed per check; `issue_count` always counts them all. */
export const QA_ISSUE_LIMIT = 100;

export interface QaFrame {
  id: string;
  index: number;
  timestampMs: number;
  egoSpeed: number | null;
}

export interface QaTrack {
  id: string;
  points: Array<{ frameId: string | null; tsMs: number | null }>;
}

export interface QaInput {
  frames: readonly QaFrame[];
  streams: readonly EgoStreamData[];
  events: ReadonlyArray<TimelineSpan & { kind: string }>;
  driving: readonly DrivingSpan[];
  tracks: readonly QaTrack[];
}

export interface QaCheck {
  check: QaCheckName;
  status: 'pass' | 'fail' | 'skipped';
  reason?: string;
  issue_count: number;
  issues: Array<Record<string, unknown>>;
  [measure: string]: unknown;
}

const done = (check: QaCheckName, issues: Array<Record<string, unknown>>, measures = {}): QaCheck => ({
  check,
  status: issues.length ? 'fail' : 'pass',
  issue_count: issues.length,
  issues: issues.slice(0, QA_ISSUE_LIMIT),
  ...measures,
});
const skipped = (check: QaCheckName, reason: string): QaCheck => ({
  check,
  status: 'skipped',
  reason,
  issue_count: 0,
  issues: [],
});

export function qaConsistency(input: QaInput, th: QaThresholds) {
  const frames = [...input.frames].sort((a, b) => a.index - b.index);
  const times = frames.map((f) => f.timestampMs);
  const first = times.length ? Math.min(...times) : null;
  const last = times.length ? Math.max(...times) : null;
  const noFrames = 'the session has no frames';
  const checks: QaCheck[] = [];

  if (first === null || last === null) checks.push(skipped('ego_coverage', noFrames));
  else if (!input.streams.length) checks.push(skipped('ego_coverage', 'the session has no ego streams'));
  else
    checks.push(
      done(
        'ego_coverage',
        input.streams
          .map((s) => ({
            kind: s.kind,
            topic: s.topic,
            coverage: coverageOf(s.tMs, first, last),
            t_start_ms: s.tMs[0] ?? null,
            t_end_ms: s.tMs[s.tMs.length - 1] ?? null,
          }))
          .filter((c) => c.coverage < th.min_coverage),
        { frames_t_start_ms: first, frames_t_end_ms: last },
      ),
    );

  const dense = input.streams.filter((s) => s.kind === 'imu' || s.kind === 'speed');
  if (!dense.length) checks.push(skipped('stream_gaps', 'the session has no imu or speed stream'));
  else
    checks.push(
      done(
        'stream_gaps',
        dense.flatMap((s) =>
          streamGaps(s.tMs, th.max_gap_ms).map((g) => ({ kind: s.kind, topic: s.topic, ...g })),
        ),
      ),
    );

  const speed = chooseSpeedStream(input.streams, times);
  if (!speed) checks.push(skipped('frame_speed', 'the session has no speed stream'));
  else {
    const expected = speedsAt(speed, times);
    const issues = frames.flatMap((f, i) => {
      const want = expected[i] ?? null;
      const problem =
        want === null
          ? f.egoSpeed === null
            ? null
            : 'outside_stream'
          : f.egoSpeed === null
            ? 'missing'
            : Math.abs(f.egoSpeed - want) > th.speed_tolerance_mps
              ? 'differs'
              : null;
      return problem
        ? [{ frame_id: f.id, index: f.index, problem, stored_mps: f.egoSpeed, stream_mps: want }]
        : [];
    });
    checks.push(
      done('frame_speed', issues, {
        topic: speed.topic,
        frames_in_stream: expected.filter((v) => v !== null).length,
      }),
    );
  }

  if (first === null || last === null) checks.push(skipped('events_in_frames', noFrames));
  else
    checks.push(
      done(
        'events_in_frames',
        input.events
          .filter((e) => e.tStartMs < first || (e.tEndMs ?? e.tStartMs) > last)
          .map((e) => ({ event_id: e.id, kind: e.kind, t_start_ms: e.tStartMs, t_end_ms: e.tEndMs })),
      ),
    );

  const drivingById = new Map(input.driving.map((d) => [d.id, d]));
  checks.push(
    done(
      'correlations',
      input.events.flatMap((e) => {
        if (!e.drivingEventId) return [];
        const d = drivingById.get(e.drivingEventId);
        const problem = !d
          ? 'driving_event_of_another_session'
          : d.state === 'rejected'
            ? 'driving_event_rejected'
            : overlapMs(e, d) === null
              ? 'no_overlap'
              : null;
        return problem ? [{ event_id: e.id, driving_event_id: e.drivingEventId, problem }] : [];
      }),
    ),
  );

  if (!input.tracks.length) checks.push(skipped('tracks_on_frames', 'the session has no tracks'));
  else {
    const byId = new Map(frames.map((f) => [f.id, f]));
    checks.push(
      done(
        'tracks_on_frames',
        input.tracks.flatMap((t) =>
          t.points.flatMap((p) => {
            const f = p.frameId ? byId.get(p.frameId) : undefined;
            const problem = !f
              ? 'frame_not_in_session'
              : p.tsMs === null || Math.abs(p.tsMs - f.timestampMs) > th.track_time_tolerance_ms
                ? 'time_differs'
                : null;
            return problem
              ? [
                  {
                    track_id: t.id,
                    frame_id: p.frameId,
                    problem,
                    ts_ms: p.tsMs,
                    frame_ts_ms: f?.timestampMs ?? null,
                  },
                ]
              : [];
          }),
        ),
      ),
    );
  }

  return { passed: checks.every((c) => c.status !== 'fail'), checks };
}

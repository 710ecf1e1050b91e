import { DEFAULT_QA_THRESHOLDS, qaConsistency, type QaInput } from './consistency';
import type { EgoStreamData } from './streams';

const times = [0, 500, 1000, 1500, 2000];
const speed: EgoStreamData = {
  kind: 'speed',
  topic: '/speed',
  messageType: 'std_msgs/Float64',
  tMs: [400, 1000, 2000],
  channels: { speed_mps: [4, 10, 20] },
};
const imu: EgoStreamData = {
  kind: 'imu',
  topic: '/imu',
  messageType: 'sensor_msgs/Imu',
  tMs: [0, 100, 1200, 2000],
  channels: { ax: [0, 0, 0, 0] },
};

const healthy = (): QaInput => ({
  frames: times.map((t, index) => ({
    id: `f${index}`,
    index,
    timestampMs: t,
    egoSpeed: [null, 5, 10, 15, 20][index] ?? null,
  })),
  streams: [
    { ...imu, tMs: [0, 400, 800, 1200, 1600, 2000] },
    { ...speed, tMs: times, channels: { speed_mps: [0, 5, 10, 15, 20] } },
  ],
  events: [{ id: 'e1', kind: 'hard_braking', tStartMs: 500, tEndMs: 900, drivingEventId: 'd1' }],
  driving: [{ id: 'd1', tStartMs: 600, tEndMs: 1200, state: 'proposed' }],
  tracks: [{ id: 't1', points: [{ frameId: 'f1', tsMs: 500 }] }],
});

const byName = (r: ReturnType<typeof qaConsistency>) => Object.fromEntries(r.checks.map((c) => [c.check, c]));

describe('qaConsistency', () => {
  it('passes a consistent session', () => {
    const input = healthy();
    input.frames[0]!.egoSpeed = 0;
    const r = qaConsistency(input, DEFAULT_QA_THRESHOLDS);
    expect(r.checks.map((c) => [c.check, c.status])).toEqual([
      ['ego_coverage', 'pass'],
      ['stream_gaps', 'pass'],
      ['frame_speed', 'pass'],
      ['events_in_frames', 'pass'],
      ['correlations', 'pass'],
      ['tracks_on_frames', 'pass'],
    ]);
    expect(r.passed).toBe(true);
  });

  it('names what is inconsistent, check by check', () => {
    const input: QaInput = {
      ...healthy(),
      streams: [imu, speed],
      events: [
        { id: 'e1', kind: 'hard_braking', tStartMs: 500, tEndMs: 900, drivingEventId: 'd1' },
        { id: 'e2', kind: 'bump', tStartMs: 2100, tEndMs: null, drivingEventId: 'gone' },
        { id: 'e3', kind: 'note', tStartMs: 100, tEndMs: 200, drivingEventId: 'd1' },
      ],
      tracks: [
        {
          id: 't1',
          points: [
            { frameId: 'f1', tsMs: 500 },
            { frameId: 'f2', tsMs: 990 },
            { frameId: 'elsewhere', tsMs: 0 },
          ],
        },
      ],
    };
    input.frames[1]!.egoSpeed = null;
    input.frames[0]!.egoSpeed = 3;
    const r = byName(qaConsistency(input, DEFAULT_QA_THRESHOLDS));
    expect(r.ego_coverage).toMatchObject({ status: 'fail', issues: [{ topic: '/speed', coverage: 0.8 }] });
    expect(r.stream_gaps).toMatchObject({
      status: 'fail',
      issues: [
        { topic: '/imu', from_ms: 100, to_ms: 1200, gap_ms: 1100 },
        { topic: '/imu', from_ms: 1200, to_ms: 2000, gap_ms: 800 },
        { topic: '/speed', from_ms: 400, to_ms: 1000, gap_ms: 600 },
        { topic: '/speed', from_ms: 1000, to_ms: 2000, gap_ms: 1000 },
      ],
    });
    expect(r.frame_speed!.issues).toEqual([
      { frame_id: 'f0', index: 0, problem: 'outside_stream', stored_mps: 3, stream_mps: null },
      { frame_id: 'f1', index: 1, problem: 'missing', stored_mps: null, stream_mps: 5 },
    ]);
    expect(r.events_in_frames!.issues).toEqual([
      { event_id: 'e2', kind: 'bump', t_start_ms: 2100, t_end_ms: null },
    ]);
    expect(r.correlations!.issues).toEqual([
      { event_id: 'e2', driving_event_id: 'gone', problem: 'driving_event_of_another_session' },
      { event_id: 'e3', driving_event_id: 'd1', problem: 'no_overlap' },
    ]);
    expect(r.tracks_on_frames!.issues).toEqual([
      { track_id: 't1', frame_id: 'f2', problem: 'time_differs', ts_ms: 990, frame_ts_ms: 1000 },
      { track_id: 't1', frame_id: 'elsewhere', problem: 'frame_not_in_session', ts_ms: 0, frame_ts_ms: null },
    ]);
  });

  it('flags a stored speed that differs from the stream and a tie to a rejected driving event', () => {
    const input = healthy();
    input.frames[0]!.egoSpeed = 0;
    input.frames[2]!.egoSpeed = 9;
    input.driving[0]!.state = 'rejected';
    const r = byName(qaConsistency(input, DEFAULT_QA_THRESHOLDS));
    expect(r.frame_speed!.issues).toEqual([
      { frame_id: 'f2', index: 2, problem: 'differs', stored_mps: 9, stream_mps: 10 },
    ]);
    expect(r.correlations!.issues).toMatchObject([{ problem: 'driving_event_rejected' }]);
  });

  it('skips what it cannot check, with the reason', () => {
    const r = qaConsistency(
      { frames: [], streams: [], events: [], driving: [], tracks: [] },
      DEFAULT_QA_THRESHOLDS,
    );
    expect(r.passed).toBe(true);
    expect(r.checks.filter((c) => c.status === 'skipped').map((c) => [c.check, c.reason])).toEqual([
      ['ego_coverage', 'the session has no frames'],
      ['stream_gaps', 'the session has no imu or speed stream'],
      ['frame_speed', 'the session has no speed stream'],
      ['events_in_frames', 'the session has no frames'],
      ['tracks_on_frames', 'the session has no tracks'],
    ]);
  });
});

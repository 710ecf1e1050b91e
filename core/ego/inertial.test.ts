import {
  DEFAULT_INERTIAL_THRESHOLDS,
  detectInertialEvents,
  smooth,
  type InertialThresholds,
} from './inertial';
import type { EgoStreamData } from './streams';

const G = 9.81;

/** 100 Hz for `ms`; each channel's value at time t from `at`, resting (az = g) elsewhere. */
function imu(
  ms: number,
  at: (t: number) => Partial<Record<'ax' | 'ay' | 'az' | 'gz', number>>,
): EgoStreamData {
  const tMs = Array.from({ length: ms / 10 + 1 }, (_, i) => i * 10);
  const rows = tMs.map((t) => ({ ax: 0, ay: 0, az: G, gz: 0, ...at(t) }));
  return {
    kind: 'imu',
    topic: '/imu',
    messageType: 'sensor_msgs/Imu',
    tMs,
    channels: {
      ax: rows.map((r) => r.ax),
      ay: rows.map((r) => r.ay),
      az: rows.map((r) => r.az),
      gx: rows.map(() => 0),
      gy: rows.map(() => 0),
      gz: rows.map((r) => r.gz),
    },
  };
}
const within = (t: number, from: number, to: number) => t >= from && t <= to;
const raw: InertialThresholds = { ...DEFAULT_INERTIAL_THRESHOLDS, smooth_ms: 0 };

describe('detectInertialEvents', () => {
  const drive = imu(4000, (t) => ({
    ...(within(t, 400, 500) || within(t, 1000, 1600) ? { ax: -6 } : {}),
    ...(within(t, 2500, 2900) ? { ax: 4 } : {}),
    ...(t === 2000 ? { az: G + 6 } : {}),
    ...(within(t, 3000, 3500) ? { gz: 0.5, ay: 4 } : {}),
  }));

  it('finds braking, acceleration, a left turn and a bump where they are, with their peaks', () => {
    const events = detectInertialEvents(drive, DEFAULT_INERTIAL_THRESHOLDS);
    expect(events.map((e) => e.kind)).toEqual(['hard_braking', 'bump', 'hard_acceleration', 'sharp_turn']);
    const [braking, bump, accel, turn] = events;
    // The 100 ms moving mean blurs each edge by less than half its window.
    expect(braking).toMatchObject({ channel: 'ax', unit: 'm/s²', peak: -6 });
    expect(braking!.t_start_ms).toBeGreaterThanOrEqual(1000);
    expect(braking!.t_start_ms).toBeLessThanOrEqual(1050);
    expect(braking!.t_end_ms).toBeGreaterThanOrEqual(1550);
    expect(braking!.t_end_ms).toBeLessThanOrEqual(1600);
    expect(bump).toMatchObject({ t_start_ms: 2000, t_end_ms: 2000, channel: 'az', duration_ms: 0 });
    expect(bump!.peak).toBeCloseTo(6);
    expect(accel).toMatchObject({ channel: 'ax', peak: 4 });
    expect(within(accel!.t_start_ms, 2500, 2550) && within(accel!.t_end_ms, 2850, 2900)).toBe(true);
    expect(turn).toMatchObject({ channel: 'gz', unit: 'rad/s', peak: 0.5, direction: 'left' });
  });

  it('leaves a braking jolt shorter than min_duration_ms out', () => {
    const events = detectInertialEvents(drive, DEFAULT_INERTIAL_THRESHOLDS);
    expect(events.some((e) => e.t_start_ms < 900)).toBe(false);
    const lenient = detectInertialEvents(drive, { ...DEFAULT_INERTIAL_THRESHOLDS, min_duration_ms: 50 });
    expect(lenient.filter((e) => e.kind === 'hard_braking')).toHaveLength(2);
  });

  it('on raw samples spans exactly the samples beyond the threshold, and merges runs closer than merge_gap_ms', () => {
    const two = imu(3000, (t) => (within(t, 1000, 1600) || within(t, 1700, 2000) ? { ax: -5 } : {}));
    expect(detectInertialEvents(two, raw)).toMatchObject([
      { kind: 'hard_braking', t_start_ms: 1000, t_end_ms: 2000, duration_ms: 1000 },
    ]);
    expect(
      detectInertialEvents(two, { ...raw, merge_gap_ms: 50 }).map((e) => [e.t_start_ms, e.t_end_ms]),
    ).toEqual([
      [1000, 1600],
      [1700, 2000],
    ]);
  });

  it('needs both yaw rate and lateral acceleration for a sharp turn, and tells right from left', () => {
    const right = imu(2000, (t) => (within(t, 500, 1200) ? { gz: -0.6, ay: -5 } : {}));
    expect(detectInertialEvents(right, raw)).toMatchObject([
      { kind: 'sharp_turn', direction: 'right', peak: -0.6 },
    ]);
    const slowTight = imu(2000, (t) => (within(t, 500, 1200) ? { gz: -0.6, ay: -1 } : {}));
    expect(detectInertialEvents(slowTight, raw)).toEqual([]);
  });

  it('measures a bump from the median of az, whatever the gravity offset', () => {
    const noGravity = imu(1000, (t) => ({ az: t === 500 ? -5 : 0 }));
    expect(detectInertialEvents(noGravity, raw)).toMatchObject([{ kind: 'bump', t_start_ms: 500, peak: -5 }]);
  });

  it('finds nothing in a quiet drive or in null samples', () => {
    expect(
      detectInertialEvents(
        imu(2000, () => ({})),
        DEFAULT_INERTIAL_THRESHOLDS,
      ),
    ).toEqual([]);
    const empty: EgoStreamData = {
      kind: 'imu',
      topic: '/imu',
      messageType: 'sensor_msgs/Imu',
      tMs: [0, 10],
      channels: {},
    };
    expect(detectInertialEvents(empty, DEFAULT_INERTIAL_THRESHOLDS)).toEqual([]);
  });
});

describe('smooth', () => {
  it('averages over a centred window of time, skipping nulls, and keeps a null sample null', () => {
    expect(smooth([0, 10, 20, 30], [0, 3, 6, null], 20)).toEqual([1.5, 3, 4.5, null]);
    expect(smooth([0, 10], [1, 2], 0)).toEqual([1, 2]);
  });
});

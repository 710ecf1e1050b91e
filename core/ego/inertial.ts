import type { ChannelValue, EgoStreamData } from './streams';

/**
 * Inertial events from an IMU stream (docs/ego-state.md "Inertial events"): hard braking, hard
 * acceleration, sharp turn, bump. Channels in the vehicle frame (x forward, y left, z up).
 */
export const INERTIAL_EVENT_KINDS = ['hard_braking', 'hard_acceleration', 'sharp_turn', 'bump'] as const;
export type InertialEventKind = (typeof INERTIAL_EVENT_KINDS)[number];

export const INERTIAL_RULES_VERSION = 'inertial-1';

export interface InertialThresholds {
  /** Longitudinal deceleration (−ax) at or beyond this is hard braking (m/s²). */
  brake_mps2: number;
  /** Longitudinal acceleration (ax) at or beyond this is hard acceleration (m/s²). */
  accel_mps2: number;
  /** A sharp turn needs a yaw rate |gz| at or beyond this (rad/s) … */
  turn_yaw_rad_s: number;
  /** … together with a lateral acceleration |ay| at or beyond this (m/s²). */
  turn_lateral_mps2: number;
  /** A bump is |az − median az| at or beyond this (m/s²), on the raw samples. */
  bump_mps2: number;
  /** Braking, acceleration and turns must hold this long (ms); a bump is a spike and need not. */
  min_duration_ms: number;
  /** Runs of one kind closer than this (ms) are one event. */
  merge_gap_ms: number;
  /** ax, ay and gz are averaged over a centred window this wide (ms) before the thresholds; 0: raw. */
  smooth_ms: number;
}

/**
 * Defaults near the usual telematics limits: harsh braking about 0.35 g, harsh acceleration about
 * 0.3 g, a turn at 0.3 rad/s (17°/s) with 0.3 g of lateral acceleration, a vertical jolt of 0.4 g.
 */
export const DEFAULT_INERTIAL_THRESHOLDS: InertialThresholds = {
  brake_mps2: 3.5,
  accel_mps2: 3.0,
  turn_yaw_rad_s: 0.3,
  turn_lateral_mps2: 3.0,
  bump_mps2: 4.0,
  min_duration_ms: 300,
  merge_gap_ms: 200,
  smooth_ms: 100,
};

export interface InertialEvent {
  kind: InertialEventKind;
  t_start_ms: number;
  t_end_ms: number;
  duration_ms: number;
  /** The channel the rule measured, and its most extreme value over the event (smoothed, bump raw). */
  channel: 'ax' | 'gz' | 'az';
  unit: string;
  peak: number;
  peak_t_ms: number;
  /** Sharp turns: the way the vehicle turned (gz > 0 is to the left). */
  direction?: 'left' | 'right';
}

/** A centred moving mean over `windowMs` of time, skipping nulls. */
export function smooth(
  tMs: readonly number[],
  values: readonly ChannelValue[],
  windowMs: number,
): ChannelValue[] {
  if (windowMs <= 0) return [...values];
  const half = windowMs / 2;
  const out: ChannelValue[] = [];
  let lo = 0;
  let hi = 0;
  let sum = 0;
  let count = 0;
  for (let i = 0; i < tMs.length; i++) {
    while (hi < tMs.length && tMs[hi]! <= tMs[i]! + half) {
      const v = values[hi] ?? null;
      if (v !== null) {
        sum += v;
        count++;
      }
      hi++;
    }
    while (tMs[lo]! < tMs[i]! - half) {
      const v = values[lo] ?? null;
      if (v !== null) {
        sum -= v;
        count--;
      }
      lo++;
    }
    out.push(values[i] === null || !count ? null : sum / count);
  }
  return out;
}

function median(values: readonly ChannelValue[]): number | null {
  const finite = values.filter((v): v is number => v !== null).sort((a, b) => a - b);
  if (!finite.length) return null;
  const m = finite.length >> 1;
  return finite.length % 2 ? finite[m]! : (finite[m - 1]! + finite[m]!) / 2;
}

/** Runs [first, last] of consecutive qualifying samples, runs closer than `mergeGapMs` joined. */
function runs(tMs: readonly number[], hit: readonly boolean[], mergeGapMs: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let i = 0; i < hit.length; i++) {
    if (!hit[i]) continue;
    let j = i;
    while (j + 1 < hit.length && hit[j + 1]) j++;
    const last = out[out.length - 1];
    if (last && tMs[i]! - tMs[last[1]]! <= mergeGapMs) last[1] = j;
    else out.push([i, j]);
    i = j;
  }
  return out;
}

/** The sample of [first, last] where `score` is largest. */
function peakIndex(first: number, last: number, score: (i: number) => number): number {
  let best = first;
  for (let i = first + 1; i <= last; i++) if (score(i) > score(best)) best = i;
  return best;
}

/** The events of one IMU stream, ordered by start. */
export function detectInertialEvents(imu: EgoStreamData, th: InertialThresholds): InertialEvent[] {
  const t = imu.tMs;
  const ch = (name: string): ChannelValue[] => imu.channels[name] ?? t.map(() => null);
  const ax = smooth(t, ch('ax'), th.smooth_ms);
  const ay = smooth(t, ch('ay'), th.smooth_ms);
  const gz = smooth(t, ch('gz'), th.smooth_ms);
  const azRaw = ch('az');
  const gravity = median(azRaw);
  const bumpOf = (i: number): number | null => {
    const v = azRaw[i] ?? null;
    return v === null || gravity === null ? null : v - gravity;
  };
  const abs = (v: ChannelValue) => (v === null ? -Infinity : Math.abs(v));

  const events: InertialEvent[] = [];
  const emit = (
    kind: InertialEventKind,
    hit: boolean[],
    channel: InertialEvent['channel'],
    valueAt: (i: number) => number | null,
    score: (i: number) => number,
    minDurationMs: number,
  ) => {
    for (const [first, last] of runs(t, hit, th.merge_gap_ms)) {
      const duration = t[last]! - t[first]!;
      if (duration < minDurationMs) continue;
      const p = peakIndex(first, last, score);
      const peak = valueAt(p)!;
      events.push({
        kind,
        t_start_ms: t[first]!,
        t_end_ms: t[last]!,
        duration_ms: duration,
        channel,
        unit: channel === 'gz' ? 'rad/s' : 'm/s²',
        peak,
        peak_t_ms: t[p]!,
        ...(kind === 'sharp_turn' ? { direction: peak > 0 ? ('left' as const) : ('right' as const) } : {}),
      });
    }
  };

  emit(
    'hard_braking',
    ax.map((v) => v !== null && v <= -th.brake_mps2),
    'ax',
    (i) => ax[i] ?? null,
    (i) => -(ax[i] ?? Infinity),
    th.min_duration_ms,
  );
  emit(
    'hard_acceleration',
    ax.map((v) => v !== null && v >= th.accel_mps2),
    'ax',
    (i) => ax[i] ?? null,
    (i) => ax[i] ?? -Infinity,
    th.min_duration_ms,
  );
  emit(
    'sharp_turn',
    gz.map((v, i) => abs(v) >= th.turn_yaw_rad_s && abs(ay[i] ?? null) >= th.turn_lateral_mps2),
    'gz',
    (i) => gz[i] ?? null,
    (i) => abs(gz[i] ?? null),
    th.min_duration_ms,
  );
  emit(
    'bump',
    t.map((_, i) => abs(bumpOf(i)) >= th.bump_mps2),
    'az',
    bumpOf,
    (i) => abs(bumpOf(i)),
    0,
  );
  return events.sort((a, b) => a.t_start_ms - b.t_start_ms || a.kind.localeCompare(b.kind));
}

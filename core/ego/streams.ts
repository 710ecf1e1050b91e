/**
 * Ego streams (docs/ego-state.md): which ROS topics carry ego state, how one message becomes one
 * sample of named channels, and the stream arithmetic the reads share (interpolation, coverage,
 * gaps, summaries). Samples are columns: `tMs` and one array per channel, all of one length.
 */

export const EGO_KINDS = ['imu', 'gnss', 'speed'] as const;
export type EgoKind = (typeof EGO_KINDS)[number];

export const CHANNEL_UNITS: Record<string, string> = {
  ax: 'm/s²',
  ay: 'm/s²',
  az: 'm/s²',
  gx: 'rad/s',
  gy: 'rad/s',
  gz: 'rad/s',
  lat: 'deg',
  lon: 'deg',
  alt: 'm',
  status: 'sensor_msgs/NavSatStatus',
  speed_mps: 'm/s',
};

/** A channel value; null where the message held no finite number (NavSatFix altitude may be NaN). */
export type ChannelValue = number | null;
export type Sample = Record<string, ChannelValue>;

export interface EgoStreamData {
  kind: EgoKind;
  topic: string;
  messageType: string;
  tMs: number[];
  channels: Record<string, ChannelValue[]>;
}

type Vec = { x?: unknown; y?: unknown; z?: unknown } | undefined;
type Msg = Record<string, unknown>;

const num = (v: unknown): ChannelValue => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const field = (m: unknown, key: string): unknown =>
  m !== null && typeof m === 'object' ? (m as Msg)[key] : undefined;
/** Ground speed is the norm of the linear velocity: the sign of a forward component says nothing of how fast. */
const speedOf = (v: Vec): ChannelValue => {
  const [x, y, z] = [num(v?.x), num(v?.y), num(v?.z)];
  return x === null || y === null || z === null ? null : Math.hypot(x, y, z);
};
const absOrNull = (v: unknown): ChannelValue => {
  const n = num(v);
  return n === null ? null : Math.abs(n);
};

interface Decoder {
  kind: EgoKind;
  /** Float topics are speeds only when the topic says so. */
  topicMustSay?: RegExp;
  decode(message: unknown): Sample;
}

const DECODERS: Record<string, Decoder> = {
  'sensor_msgs/Imu': {
    kind: 'imu',
    decode: (m) => {
      const a = field(m, 'linear_acceleration') as Vec;
      const g = field(m, 'angular_velocity') as Vec;
      return {
        ax: num(a?.x),
        ay: num(a?.y),
        az: num(a?.z),
        gx: num(g?.x),
        gy: num(g?.y),
        gz: num(g?.z),
      };
    },
  },
  'sensor_msgs/NavSatFix': {
    kind: 'gnss',
    decode: (m) => ({
      lat: num(field(m, 'latitude')),
      lon: num(field(m, 'longitude')),
      alt: num(field(m, 'altitude')),
      status: num(field(field(m, 'status'), 'status')),
    }),
  },
  'geometry_msgs/TwistStamped': {
    kind: 'speed',
    decode: (m) => ({ speed_mps: speedOf(field(field(m, 'twist'), 'linear') as Vec) }),
  },
  'nav_msgs/Odometry': {
    kind: 'speed',
    decode: (m) => ({ speed_mps: speedOf(field(field(field(m, 'twist'), 'twist'), 'linear') as Vec) }),
  },
  'std_msgs/Float32': {
    kind: 'speed',
    topicMustSay: /speed/i,
    decode: (m) => ({ speed_mps: absOrNull(field(m, 'data')) }),
  },
  'std_msgs/Float64': {
    kind: 'speed',
    topicMustSay: /speed/i,
    decode: (m) => ({ speed_mps: absOrNull(field(m, 'data')) }),
  },
};

/** ROS 2 spells the types with /msg/ (`sensor_msgs/msg/Imu`); MCAP files from either world may carry them. */
export const rosType = (type: string): string => type.replace('/msg/', '/');

function decoderOf(type: string, topic: string): Decoder | null {
  const d = DECODERS[rosType(type)];
  if (!d || (d.topicMustSay && !d.topicMustSay.test(topic))) return null;
  return d;
}

/** The ego kind a topic of this type carries, or null when it carries none. */
export const egoKindOf = (type: string, topic: string): EgoKind | null =>
  decoderOf(type, topic)?.kind ?? null;

/** Collects one topic's samples; `build` orders them by time (bags interleave chunks). */
export class EgoStreamBuilder {
  private readonly decoder: Decoder;
  private readonly samples: Array<{ tMs: number; sample: Sample }> = [];

  constructor(
    readonly topic: string,
    readonly messageType: string,
  ) {
    const d = decoderOf(messageType, topic);
    if (!d) throw new Error(`${messageType} on ${topic} carries no ego state`);
    this.decoder = d;
  }

  add(tMs: number, message: unknown): void {
    this.samples.push({ tMs, sample: this.decoder.decode(message) });
  }

  get size(): number {
    return this.samples.length;
  }

  build(): EgoStreamData {
    const sorted = [...this.samples].sort((a, b) => a.tMs - b.tMs);
    const names = Object.keys(sorted[0]?.sample ?? this.decoder.decode({}));
    return {
      kind: this.decoder.kind,
      topic: this.topic,
      messageType: this.messageType,
      tMs: sorted.map((s) => s.tMs),
      channels: Object.fromEntries(names.map((n) => [n, sorted.map((s) => s.sample[n] ?? null)])),
    };
  }
}

/** Index of the last sample at or before `t`, -1 when `t` is before the first. */
function lastAtOrBefore(tMs: readonly number[], t: number): number {
  let lo = 0;
  let hi = tMs.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (tMs[mid]! <= t) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/**
 * A channel linearly interpolated at `t`; null outside the stream's span and where a neighbouring
 * sample is null (no value is made up across a hole).
 */
export function interpolateAt(
  tMs: readonly number[],
  values: readonly ChannelValue[],
  t: number,
): ChannelValue {
  const n = tMs.length;
  if (!n || t < tMs[0]! || t > tMs[n - 1]!) return null;
  const i = lastAtOrBefore(tMs, t);
  const v0 = values[i] ?? null;
  if (tMs[i] === t || i === n - 1) return v0;
  const v1 = values[i + 1] ?? null;
  if (v0 === null || v1 === null) return null;
  const t0 = tMs[i]!;
  const t1 = tMs[i + 1]!;
  return t1 === t0 ? v0 : v0 + ((v1 - v0) * (t - t0)) / (t1 - t0);
}

/** Each frame's ego speed from a speed stream, null outside its span. */
export const speedsAt = (stream: EgoStreamData, times: readonly number[]): ChannelValue[] =>
  times.map((t) => interpolateAt(stream.tMs, stream.channels.speed_mps ?? [], t));

/**
 * The speed stream frames take their ego speed from: the one giving a speed to the most frames,
 * then the first by topic name, so the choice is the same at ingest and at every read.
 */
export function chooseSpeedStream(
  streams: readonly EgoStreamData[],
  frameTimes: readonly number[],
): EgoStreamData | null {
  const ranked = streams
    .filter((s) => s.kind === 'speed')
    .map((s) => ({ s, covered: speedsAt(s, frameTimes).filter((v) => v !== null).length }))
    .sort((a, b) => b.covered - a.covered || a.s.topic.localeCompare(b.s.topic));
  return ranked[0]?.s ?? null;
}

export interface ChannelSummary {
  unit: string | null;
  min: number | null;
  max: number | null;
  mean: number | null;
  nulls: number;
}

export function summarizeStream(s: EgoStreamData) {
  const n = s.tMs.length;
  const span = n ? s.tMs[n - 1]! - s.tMs[0]! : 0;
  const channels: Record<string, ChannelSummary> = {};
  for (const [name, values] of Object.entries(s.channels)) {
    const finite = values.filter((v): v is number => v !== null);
    channels[name] = {
      unit: CHANNEL_UNITS[name] ?? null,
      min: finite.length ? finite.reduce((a, b) => Math.min(a, b)) : null,
      max: finite.length ? finite.reduce((a, b) => Math.max(a, b)) : null,
      mean: finite.length ? finite.reduce((a, b) => a + b, 0) / finite.length : null,
      nulls: values.length - finite.length,
    };
  }
  return {
    kind: s.kind,
    topic: s.topic,
    message_type: s.messageType,
    samples: n,
    t_start_ms: n ? s.tMs[0]! : null,
    t_end_ms: n ? s.tMs[n - 1]! : null,
    rate_hz: n > 1 && span > 0 ? ((n - 1) * 1000) / span : null,
    channels,
  };
}

export interface StreamGap {
  from_ms: number;
  to_ms: number;
  gap_ms: number;
}

/** Intervals between consecutive samples longer than `maxGapMs`. */
export function streamGaps(tMs: readonly number[], maxGapMs: number): StreamGap[] {
  const gaps: StreamGap[] = [];
  for (let i = 1; i < tMs.length; i++) {
    const gap = tMs[i]! - tMs[i - 1]!;
    if (gap > maxGapMs) gaps.push({ from_ms: tMs[i - 1]!, to_ms: tMs[i]!, gap_ms: gap });
  }
  return gaps;
}

/** The share of [from, to] that the stream's span covers (1 when the span is a point inside). */
export function coverageOf(tMs: readonly number[], from: number, to: number): number {
  const n = tMs.length;
  if (!n) return 0;
  const overlap = Math.min(to, tMs[n - 1]!) - Math.max(from, tMs[0]!);
  if (to <= from) return tMs[0]! <= from && tMs[n - 1]! >= to ? 1 : 0;
  return Math.max(0, overlap) / (to - from);
}

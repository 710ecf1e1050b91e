/**
 * Ground-truth captures from a real signal database: every message is sent periodically with
 * realistic per-signal traces (ramps, noisy sinusoids, random-walk steps, toggling booleans,
 * enumerations), counters incrementing per frame, checksums computed with an algorithm assigned
 * here and recorded as truth, and round-robin multiplexer pages. The truth stays on this side:
 * the detectors get only the frames.
 */
import type { DbcDatabase, DbcMessage, DbcSignal } from '../dbc/model';
import { insertRaw } from '../dbc/codec';
import type { CanFrame } from '../frame';
import { lengthToDlc } from '../frame';
import { fieldBits, readField, type FieldRef } from '../analysis/bits';
import { CRC8_AUTOSAR_8H2F, CRC8_SAE_J1850, crc8, idBytes, idNibbleSum, nibbleOf } from '../detect/crc';
import type { ChecksumAlgorithm } from '../detect/types';

// Module-level bindings, not `Math.x` in loops: under jest the global object sits behind a
// vm interceptor and each global lookup in a hot loop costs ~50× (see docs/testing.md).
const { cos, floor, imul, log, max, min, round, sin, sqrt } = Math;

export type SignalRole = 'counter' | 'checksum' | 'multiplexer' | 'data';

export interface TruthChecksum {
  algorithm: ChecksumAlgorithm;
  constant: number;
  dataId?: number;
  dataIdPlacement?: 'append' | 'prepend';
  label: string;
}

export interface TruthSignal {
  name: string;
  field: FieldRef;
  signed: boolean;
  role: SignalRole;
  /** Whether the generated raw value changed at least once. */
  varies: boolean;
  /** Whether every bit of the field toggled at least once (only then can its full extent be seen in the frames). */
  exercised: boolean;
  /** Trace shape used for data signals. */
  trace: string;
  multiplexerValue?: number;
  checksum?: TruthChecksum;
}

export interface TruthMessage {
  id: number;
  extended: boolean;
  name: string;
  length: number;
  signals: TruthSignal[];
  /** Signals not generated, with why (overlapping another signal, float type, past the payload). */
  excluded: Array<{ name: string; reason: string }>;
}

export interface GeneratedCapture {
  frames: CanFrame[];
  truth: TruthMessage[];
}

export interface GenerateOptions {
  seed?: number;
  framesPerMessage?: number;
  /** Share of data signals (other than counters, checksums, selectors) held constant, as in real captures. Default 0.08. */
  constantShare?: number;
  /** Share of the raw range a numeric trace spans at least. Default 0.55. */
  minSpan?: number;
  /** Offset added to the checksum algorithm rotation, to vary assignments between databases. */
  checksumRotation?: number;
}

/** mulberry32: small deterministic PRNG. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = imul(t ^ (t >>> 15), t | 1);
    t ^= t + imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function gauss(rand: () => number): number {
  const u = max(1e-12, rand());
  return sqrt(-2 * log(u)) * cos(2 * Math.PI * rand());
}

const COUNTER_NAME = /(counter|alive|msgcnt|msgcount|^ctr(_?[a-d])?(_?\d)?$)/i;
const CHECKSUM_NAME = /(checksum|chksum|^crc_|_crc\d*$|^chk)/i;

export function roleOf(signal: DbcSignal): SignalRole {
  if (signal.isMultiplexer) return 'multiplexer';
  if (CHECKSUM_NAME.test(signal.name)) return 'checksum';
  if (COUNTER_NAME.test(signal.name) && signal.length >= 2) return 'counter';
  return 'data';
}

const BYTE_ALGOS: TruthChecksum[] = [
  { algorithm: 'sum8', constant: -1, label: 'sum + id bytes (Tesla style)' },
  { algorithm: 'crc8_sae_j1850', constant: 0, label: 'CRC-8 SAE J1850' },
  { algorithm: 'sum8', constant: -2, label: 'Toyota (id bytes + length + data)' },
  {
    algorithm: 'crc8_autosar_8h2f',
    constant: 0,
    dataId: -1,
    dataIdPlacement: 'append',
    label: 'CRC-8 8H2F + data id appended',
  },
  { algorithm: 'xor8', constant: 0, label: 'XOR of bytes' },
  {
    algorithm: 'crc8_sae_j1850',
    constant: 0,
    dataId: -1,
    dataIdPlacement: 'prepend',
    label: 'CRC-8 SAE J1850 + data id prepended',
  },
  { algorithm: 'negsum8', constant: 0xff, label: 'inverted sum (~sum)' },
  { algorithm: 'crc8_autosar_8h2f', constant: 0, label: 'CRC-8 8H2F' },
  { algorithm: 'sum8', constant: 0, label: 'plain sum' },
];
const NIBBLE_ALGOS: TruthChecksum[] = [
  { algorithm: 'nibble_negsum', constant: -3, label: 'Honda (8 - nibble sum of id and data)' },
  { algorithm: 'nibble_sum', constant: 0, label: 'nibble sum' },
];

/** Concrete checksum parameters for a message (resolving the id-dependent placeholders). */
function resolveChecksum(template: TruthChecksum, message: DbcMessage, rand: () => number): TruthChecksum {
  const idSum = idBytes(message.id, message.extended).reduce((a, b) => a + b, 0);
  const c = { ...template };
  if (c.constant === -1) c.constant = idSum & 0xff;
  if (c.constant === -2) c.constant = (idSum + message.length) & 0xff;
  if (c.constant === -3) c.constant = (8 - idNibbleSum(message.id)) & 0xf;
  if (c.dataId === -1) c.dataId = floor(rand() * 256);
  return c;
}

/** Computes a checksum value for a payload, over every byte (or nibble) but its own. */
export function computeChecksum(cs: TruthChecksum, data: Uint8Array, field: FieldRef): number {
  const bits = fieldBits(field);
  if (cs.algorithm === 'nibble_sum' || cs.algorithm === 'nibble_negsum') {
    const nib = bits[0]! >> 2;
    let s = 0;
    for (let j = 0; j < data.length * 2; j++) if (j !== nib) s += nibbleOf(data, j);
    return cs.algorithm === 'nibble_sum' ? (cs.constant + s) & 0xf : (cs.constant - s) & 0xf;
  }
  const pos = bits[0]! >> 3;
  const covered: number[] = [];
  for (let i = 0; i < data.length; i++) if (i !== pos) covered.push(i);
  let x = 0;
  let s = 0;
  for (const i of covered) {
    x ^= data[i]!;
    s += data[i]!;
  }
  switch (cs.algorithm) {
    case 'xor8':
      return x ^ cs.constant;
    case 'sum8':
      return (s + cs.constant) & 0xff;
    case 'negsum8':
      return (cs.constant - s) & 0xff;
    case 'crc8_sae_j1850':
      return crc8(CRC8_SAE_J1850, data, covered, cs.dataId, cs.dataIdPlacement);
    case 'crc8_autosar_8h2f':
      return crc8(CRC8_AUTOSAR_8H2F, data, covered, cs.dataId, cs.dataIdPlacement);
  }
}

type Trace = (t: number) => number;

/** A data signal's raw-value trace (integer, in the signal's signed or unsigned raw range). */
function makeTrace(
  signal: DbcSignal,
  frames: number,
  rand: () => number,
  minSpan: number,
): { trace: Trace; kind: string } {
  const n = signal.length;
  const lo = signal.signed ? -(2 ** (n - 1)) : 0;
  const hi = signal.signed ? 2 ** (n - 1) - 1 : 2 ** n - 1;
  const clamp = (v: number): number => max(lo, min(hi, round(v)));
  const dwell = (): number => 5 + floor(rand() * 90);
  const holdSequence = (pick: () => number): Trace => {
    const seq = new Float64Array(frames);
    let v = pick();
    let left = dwell();
    for (let t = 0; t < frames; t++) {
      if (left-- <= 0) {
        v = pick();
        left = dwell();
      }
      seq[t] = v;
    }
    return (t) => seq[t]!;
  };
  if (n === 1) return { trace: holdSequence(() => (rand() < 0.5 ? 0 : 1)), kind: 'boolean' };
  const table = signal.valueTable ? [...signal.valueTable.keys()].filter((k) => k >= lo && k <= hi) : [];
  if (table.length >= 2)
    return { trace: holdSequence(() => table[floor(rand() * table.length)]!), kind: 'enumeration' };
  if (n <= 3) {
    const count = 2 + floor(rand() * (2 ** n - 1));
    const values = Array.from({ length: count }, () => floor(rand() * 2 ** n) + lo);
    return { trace: holdSequence(() => values[floor(rand() * values.length)]!), kind: 'enumeration' };
  }
  const range = hi - lo;
  const span = range * (minSpan + (0.95 - minSpan) * rand());
  // Unsigned traces sit anywhere their span fits; signed ones straddle zero, as angles and rates do.
  const base = signal.signed ? -span / 2 + (rand() - 0.5) * 0.1 * span : lo + rand() * (range - span);
  const kind = floor(rand() * 3);
  if (kind === 0) {
    const period = 150 + floor(rand() * 800);
    const phase = rand();
    return {
      trace: (t) => {
        const x = (t / period + phase) % 1;
        return clamp(base + span * (x < 0.5 ? 2 * x : 2 - 2 * x));
      },
      kind: 'ramp',
    };
  }
  if (kind === 1) {
    const period = 80 + floor(rand() * 600);
    const phase = rand() * 2 * Math.PI;
    const noise = max(0.3, 0.002 * range);
    return {
      trace: (t) =>
        clamp(base + (span / 2) * (1 + sin((2 * Math.PI * t) / period + phase)) + noise * gauss(rand)),
      kind: 'sinusoid+noise',
    };
  }
  const seq = new Float64Array(frames);
  let v = base + span / 2;
  let hold = 0;
  for (let t = 0; t < frames; t++) {
    if (hold-- <= 0) {
      v = max(base, min(base + span, v + gauss(rand) * span * 0.08));
      hold = floor(rand() * 6);
    }
    seq[t] = clamp(v);
  }
  return { trace: (t) => seq[t]!, kind: 'random-walk steps' };
}

function overlaps(a: number[], b: Set<number>): boolean {
  return a.some((x) => b.has(x));
}

interface Plan {
  message: DbcMessage;
  truth: TruthMessage;
  selector?: { signal: DbcSignal; values: number[] };
  writers: Array<{ signal: DbcSignal; truth: TruthSignal; value: Trace }>;
  checksum?: { signal: DbcSignal; truth: TruthSignal };
  period: number;
}

function planMessage(
  message: DbcMessage,
  frames: number,
  rand: () => number,
  options: Required<GenerateOptions>,
  state: { checksums: number },
): Plan {
  const truth: TruthMessage = {
    id: message.id,
    extended: message.extended,
    name: message.name,
    length: message.length,
    signals: [],
    excluded: [],
  };
  const taken = new Map<string, Set<number>>(); // mux scope → bits
  const scope = (s: DbcSignal): string =>
    s.multiplexerValue === undefined ? 'all' : `m${s.multiplexerValue}`;
  const conflictsWith = (s: DbcSignal, bits: number[]): boolean => {
    const own = scope(s);
    for (const [k, set] of taken)
      if ((k === 'all' || own === 'all' || k === own) && overlaps(bits, set)) return true;
    return false;
  };
  const plan: Plan = { message, truth, writers: [], period: 0 };
  const muxValues = [
    ...new Set(
      message.signals.flatMap((s) => (s.multiplexerValue === undefined ? [] : [s.multiplexerValue])),
    ),
  ].sort((a, b) => a - b);
  // Selector first, then checksums, counters, data in file order.
  const order = [...message.signals].sort((a, b) => Number(b.isMultiplexer) - Number(a.isMultiplexer));
  for (const s of order) {
    const field: FieldRef = { startBit: s.startBit, length: s.length, byteOrder: s.byteOrder };
    const bits = fieldBits(field);
    if (s.valueType !== 'integer') {
      truth.excluded.push({ name: s.name, reason: 'float signal' });
      continue;
    }
    if (bits.some((b) => b < 0 || b >= message.length * 8) || s.length > 32) {
      truth.excluded.push({ name: s.name, reason: 'outside the payload or longer than 32 bits' });
      continue;
    }
    if (conflictsWith(s, bits)) {
      truth.excluded.push({ name: s.name, reason: 'overlaps an earlier signal' });
      continue;
    }
    const key = scope(s);
    if (!taken.has(key)) taken.set(key, new Set());
    bits.forEach((b) => taken.get(key)!.add(b));
    let role = roleOf(s);
    const base: TruthSignal = {
      name: s.name,
      field,
      signed: s.signed,
      role,
      varies: false,
      exercised: false,
      trace: '',
    };
    if (s.multiplexerValue !== undefined) base.multiplexerValue = s.multiplexerValue;
    if (role === 'multiplexer') {
      if (muxValues.length === 0) role = base.role = 'data';
      else {
        plan.selector = { signal: s, values: muxValues };
        base.trace = `round-robin ${muxValues.join(',')}`;
        truth.signals.push(base);
        continue;
      }
    }
    if (role === 'checksum') {
      const bitIdx = bits[0]!;
      const byteAligned = s.length === 8 && bits.every((b) => b >> 3 === bitIdx >> 3);
      const nibbleAligned = s.length === 4 && bits.every((b) => b >> 2 === bitIdx >> 2);
      if (
        !plan.checksum &&
        s.multiplexerValue === undefined &&
        (byteAligned || nibbleAligned) &&
        message.length >= 2
      ) {
        const list = byteAligned ? BYTE_ALGOS : NIBBLE_ALGOS;
        const template = list[(state.checksums++ + options.checksumRotation) % list.length]!;
        base.checksum = resolveChecksum(template, message, rand);
        base.trace = `checksum: ${base.checksum.label}`;
        plan.checksum = { signal: s, truth: base };
        truth.signals.push(base);
        continue;
      }
      base.role = 'data';
      base.trace = 'checksum not computable here (split or second checksum): random';
      const v = Array.from({ length: frames }, () => floor(rand() * 2 ** s.length));
      plan.writers.push({ signal: s, truth: base, value: (t) => v[t]! });
      truth.signals.push(base);
      continue;
    }
    if (role === 'counter') {
      const start = floor(rand() * 2 ** s.length);
      base.trace = 'counter +1 per frame';
      plan.writers.push({ signal: s, truth: base, value: (t) => (start + t) % 2 ** s.length });
      truth.signals.push(base);
      continue;
    }
    if (rand() < options.constantShare) {
      const lo = s.signed ? -(2 ** (s.length - 1)) : 0;
      const c = lo + floor(rand() * 2 ** s.length);
      base.trace = 'constant';
      plan.writers.push({ signal: s, truth: base, value: () => c });
    } else {
      const { trace, kind } = makeTrace(s, frames, rand, options.minSpan);
      base.trace = kind;
      plan.writers.push({ signal: s, truth: base, value: trace });
    }
    truth.signals.push(base);
  }
  return plan;
}

const CYCLE_TIMES_MS = [10, 20, 20, 50, 100, 100, 200];

/** Generates frames for every message of `db` (up to 64-byte payloads), interleaved by time. */
export function generateCapture(db: DbcDatabase, options: GenerateOptions = {}): GeneratedCapture {
  const opts: Required<GenerateOptions> = {
    seed: options.seed ?? 1,
    framesPerMessage: options.framesPerMessage ?? 1000,
    constantShare: options.constantShare ?? 0.08,
    minSpan: options.minSpan ?? 0.55,
    checksumRotation: options.checksumRotation ?? 0,
  };
  const state = { checksums: 0 };
  const rand = prng(opts.seed);
  const frames: CanFrame[] = [];
  const truth: TruthMessage[] = [];
  const n = opts.framesPerMessage;
  const seen = new Set<string>();
  for (const message of db.messages) {
    const key = `${message.extended ? 'x' : 's'}${message.id}`;
    if (message.length === 0 || message.length > 64 || seen.has(key) || message.signals.length === 0)
      continue;
    seen.add(key);
    const plan = planMessage(message, n, rand, opts, state);
    const cycle =
      typeof message.attributes.GenMsgCycleTime === 'number' && message.attributes.GenMsgCycleTime > 0
        ? message.attributes.GenMsgCycleTime
        : CYCLE_TIMES_MS[floor(rand() * CYCLE_TIMES_MS.length)]!;
    plan.period = cycle / 1000;
    const startOffset = rand() * plan.period;
    const fd = message.length > 8;
    const dlc = lengthToDlc(message.length, fd);
    const toggled = new Map<TruthSignal, number>();
    const last = new Map<TruthSignal, number>();
    for (let t = 0; t < n; t++) {
      const data = new Uint8Array(message.length);
      const page = plan.selector ? plan.selector.values[t % plan.selector.values.length]! : undefined;
      if (plan.selector && page !== undefined) insertRaw(data, plan.selector.signal, page);
      for (const w of plan.writers) {
        if (w.signal.multiplexerValue !== undefined && w.signal.multiplexerValue !== page) continue;
        insertRaw(data, w.signal, w.value(t));
      }
      if (plan.checksum)
        insertRaw(
          data,
          plan.checksum.signal,
          computeChecksum(plan.checksum.truth.checksum!, data, plan.checksum.truth.field),
        );
      // Read every active signal back from the payload to record which of its bits ever toggled.
      for (const ts of plan.truth.signals) {
        if (ts.multiplexerValue !== undefined && ts.multiplexerValue !== page) continue;
        const v = readField(data, ts.field);
        const prev = last.get(ts);
        if (prev !== undefined) toggled.set(ts, ((toggled.get(ts) ?? 0) | (prev ^ v)) >>> 0);
        last.set(ts, v);
      }
      frames.push({
        timestamp: startOffset + t * plan.period + (rand() - 0.5) * 0.02 * plan.period,
        id: message.id,
        extended: message.extended,
        remote: false,
        error: false,
        fd,
        brs: false,
        esi: false,
        dlc,
        data,
        channel: 1,
      });
    }
    for (const s of plan.truth.signals) {
      const acc = toggled.get(s) ?? 0;
      s.varies = acc !== 0;
      s.exercised = acc === (2 ** s.field.length - 1) >>> 0;
    }
    truth.push(plan.truth);
  }
  frames.sort((a, b) => a.timestamp - b.timestamp);
  return { frames, truth };
}

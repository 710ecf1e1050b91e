/**
 * Signal codec: bit-exact extraction and insertion of DBC signals, physical encode/decode of whole
 * messages with (extended) multiplexing, and a compiled fast decoder for bulk decoding.
 *
 * Bit numbering: bit `b` of the payload is bit `b % 8` (0 = least significant) of byte `b >> 3`.
 * - Intel (`@1`, little endian): `startBit` is the least significant bit; the value grows upward
 *   through the bit numbers.
 * - Motorola (`@0`, big endian): `startBit` is the MOST significant bit in that same (sawtooth)
 *   numbering; walking toward less significant bits goes 7→0 inside a byte, then to bit 7 of the
 *   next byte. In "linear big-endian" terms (byte k's bit 7 is position 8k, bit 0 is 8k+7) the
 *   signal occupies the contiguous positions msb..msb+length-1.
 */
import type { DbcDatabase, DbcMessage, DbcSignal } from './model';

export interface DecodedSignal {
  name: string;
  raw: number;
  value: number;
  unit: string;
  label?: string;
}

export interface DecodedMessage {
  message: DbcMessage;
  signals: DecodedSignal[];
}

export type RawSpec = Pick<DbcSignal, 'startBit' | 'length' | 'byteOrder' | 'signed'>;

interface Span {
  /** First and last byte index touched. */
  loByte: number;
  hiByte: number;
  /** Right shift applied to the accumulated bytes (most significant byte first for Motorola, last for Intel). */
  shift: number;
}

/** Bytes a signal touches and how to align them. */
function span(spec: Pick<DbcSignal, 'startBit' | 'length' | 'byteOrder'>): Span {
  if (spec.byteOrder === 'little_endian') {
    const lsb = spec.startBit;
    const msb = lsb + spec.length - 1;
    return { loByte: lsb >> 3, hiByte: msb >> 3, shift: lsb & 7 };
  }
  const msbLinear = (spec.startBit >> 3) * 8 + (7 - (spec.startBit & 7));
  const lsbLinear = msbLinear + spec.length - 1;
  return { loByte: msbLinear >> 3, hiByte: lsbLinear >> 3, shift: 7 - (lsbLinear & 7) };
}

/** Number of payload bytes a signal needs (its highest byte index + 1). */
export function signalEndByte(spec: Pick<DbcSignal, 'startBit' | 'length' | 'byteOrder'>): number {
  return span(spec).hiByte + 1;
}

/** Unsigned raw bits as a BigInt (exact for any length). Bytes past the end of `data` read as 0. */
export function extractRawBigInt(data: Uint8Array, spec: RawSpec): bigint {
  const { loByte, hiByte, shift } = span(spec);
  let acc = 0n;
  if (spec.byteOrder === 'little_endian') {
    for (let k = hiByte; k >= loByte; k--) acc = (acc << 8n) | BigInt(data[k] ?? 0);
  } else {
    for (let k = loByte; k <= hiByte; k++) acc = (acc << 8n) | BigInt(data[k] ?? 0);
  }
  const bits = BigInt.asUintN(spec.length, acc >> BigInt(shift));
  return spec.signed ? BigInt.asIntN(spec.length, bits) : bits;
}

/**
 * Raw value of a signal: unsigned or two's-complement signed integer per `signed`. Exact up to
 * 2^53; longer signals come back rounded to the nearest double (use extractRawBigInt for the exact
 * bits). Bytes past the end of `data` read as 0.
 */
export function extractRaw(data: Uint8Array, spec: RawSpec): number {
  const { loByte, hiByte, shift } = span(spec);
  if (hiByte - loByte >= 6) return Number(extractRawBigInt(data, spec));
  let acc = 0;
  if (spec.byteOrder === 'little_endian') {
    for (let k = hiByte; k >= loByte; k--) acc = acc * 256 + (data[k] ?? 0);
  } else {
    for (let k = loByte; k <= hiByte; k++) acc = acc * 256 + (data[k] ?? 0);
  }
  const range = 2 ** spec.length;
  let raw = Math.floor(acc / 2 ** shift) % range;
  if (spec.signed && raw >= range / 2) raw -= range;
  return raw;
}

/**
 * Write a raw value into `data` in place. `raw` is taken modulo 2^length (so negative values land
 * as two's complement); pass a BigInt for exact values beyond 2^53. Other bits are untouched.
 */
export function insertRaw(data: Uint8Array, spec: RawSpec, raw: number | bigint): void {
  if (typeof raw === 'number' && !Number.isInteger(raw))
    throw new RangeError(`raw value ${raw} is not an integer`);
  const bits = BigInt.asUintN(spec.length, typeof raw === 'bigint' ? raw : BigInt(raw));
  const { hiByte } = span(spec);
  if (hiByte >= data.length) {
    throw new RangeError(
      `signal at bit ${spec.startBit} (${spec.length} bits) does not fit in ${data.length} bytes`,
    );
  }
  const len = spec.length;
  if (spec.byteOrder === 'little_endian') {
    for (let i = 0; i < len; i++) {
      const pos = spec.startBit + i;
      setBit(data, pos >> 3, pos & 7, Number((bits >> BigInt(i)) & 1n));
    }
  } else {
    const msbLinear = (spec.startBit >> 3) * 8 + (7 - (spec.startBit & 7));
    for (let i = 0; i < len; i++) {
      const linear = msbLinear + i;
      setBit(data, linear >> 3, 7 - (linear & 7), Number((bits >> BigInt(len - 1 - i)) & 1n));
    }
  }
}

function setBit(data: Uint8Array, byte: number, bit: number, value: number): void {
  if (value) data[byte] = data[byte]! | (1 << bit);
  else data[byte] = data[byte]! & ~(1 << bit);
}

const scratch = new DataView(new ArrayBuffer(8));

/** Raw numeric value of a signal honouring SIG_VALTYPE_ (IEEE float32 / float64 bit patterns). */
export function extractSignalRaw(data: Uint8Array, signal: DbcSignal): number {
  if (signal.valueType === 'float32') {
    scratch.setUint32(0, extractRaw(data, { ...signal, signed: false }));
    return scratch.getFloat32(0);
  }
  if (signal.valueType === 'float64') {
    scratch.setBigUint64(0, extractRawBigInt(data, { ...signal, signed: false }));
    return scratch.getFloat64(0);
  }
  return extractRaw(data, signal);
}

/** Write a signal's raw value honouring SIG_VALTYPE_ (raw is the float itself for float signals). */
export function insertSignalRaw(data: Uint8Array, signal: DbcSignal, raw: number): void {
  if (signal.valueType === 'float32') {
    scratch.setFloat32(0, raw);
    insertRaw(data, signal, scratch.getUint32(0));
  } else if (signal.valueType === 'float64') {
    scratch.setFloat64(0, raw);
    insertRaw(data, signal, scratch.getBigUint64(0));
  } else if (Math.abs(raw) > Number.MAX_SAFE_INTEGER) {
    insertRaw(data, signal, BigInt(raw));
  } else {
    insertRaw(data, signal, raw);
  }
}

/** Physical value → raw: (value - offset) / factor, rounded to an integer for integer signals. */
export function physicalToRaw(signal: DbcSignal, value: number): number {
  const scaled = signal.factor === 0 ? 0 : (value - signal.offset) / signal.factor;
  return signal.valueType === 'integer' ? Math.round(scaled) : scaled;
}

/** Raw → physical value. */
export function rawToPhysical(signal: DbcSignal, raw: number): number {
  return raw * signal.factor + signal.offset;
}

// ---- multiplexing ----

/** How a signal's presence depends on multiplexer switches: every condition must hold. */
export interface MuxCondition {
  /** Index of the switch signal in `message.signals`. */
  switchIndex: number;
  /** Switch values that select the signal; empty when none does (a bare `m` without SG_MUL_VAL_). */
  ranges: Array<[number, number]>;
}

/**
 * For each signal of the message, the switch and values that select it (undefined = always
 * present). `SG_MUL_VAL_` wins; otherwise an `m<N>` signal hangs off the message's switch: the
 * only one when there is one, else the multiplexed switch (`m<N>M`) if exactly one exists, else the
 * first plain `M` switch. A bare `m` without SG_MUL_VAL_ gets no values (never present).
 */
export function muxConditions(message: DbcMessage): Array<MuxCondition | undefined> {
  const switches: number[] = [];
  message.signals.forEach((s, i) => {
    if (s.isMultiplexer) switches.push(i);
  });
  const byName = new Map<string, number>();
  message.signals.forEach((s, i) => {
    if (!byName.has(s.name)) byName.set(s.name, i);
  });
  let defaultSwitch: number | undefined;
  if (switches.length === 1) defaultSwitch = switches[0];
  else if (switches.length > 1) {
    const nested = switches.filter((i) => message.signals[i]!.multiplexerValue !== undefined);
    const plain = switches.filter((i) => message.signals[i]!.multiplexerValue === undefined);
    defaultSwitch = nested.length === 1 ? nested[0] : plain[0];
  }
  return message.signals.map((s, i) => {
    const ext = s.extendedMultiplexing;
    if (ext) {
      const switchIndex = byName.get(ext.multiplexer);
      if (switchIndex !== undefined && switchIndex !== i) return { switchIndex, ranges: ext.ranges };
    }
    // `m` without a value and without SG_MUL_VAL_: no switch value selects it
    if (s.multiplexedWithoutValue) return { switchIndex: defaultSwitch ?? i, ranges: [] };
    if (s.multiplexerValue === undefined) return undefined;
    let switchIndex = defaultSwitch;
    if (switchIndex === i)
      switchIndex = switches.find((j) => j !== i && message.signals[j]!.multiplexerValue === undefined);
    if (switchIndex === undefined) return undefined;
    return { switchIndex, ranges: [[s.multiplexerValue, s.multiplexerValue]] };
  });
}

function inRanges(value: number, ranges: Array<[number, number]>): boolean {
  for (const [lo, hi] of ranges) if (value >= lo && value <= hi) return true;
  return false;
}

/** Which signals are present given each switch's raw value (`rawOf(i)`), following switch chains. */
function activeSignals(
  conditions: Array<MuxCondition | undefined>,
  rawOf: (index: number) => number,
): boolean[] {
  const state: Array<boolean | undefined> = new Array(conditions.length);
  const resolve = (i: number, depth: number): boolean => {
    const known = state[i];
    if (known !== undefined) return known;
    const cond = conditions[i];
    let active = true;
    if (cond) {
      // A cycle of switches (malformed file) is treated as inactive.
      active =
        cond.ranges.length > 0 &&
        depth < conditions.length &&
        resolve(cond.switchIndex, depth + 1) &&
        inRanges(rawOf(cond.switchIndex), cond.ranges);
    }
    state[i] = active;
    return active;
  };
  return conditions.map((_, i) => resolve(i, 0));
}

const conditionCache = new WeakMap<DbcMessage, Array<MuxCondition | undefined>>();

function cachedConditions(message: DbcMessage): Array<MuxCondition | undefined> {
  let conditions = conditionCache.get(message);
  if (!conditions || conditions.length !== message.signals.length) {
    conditions = muxConditions(message);
    conditionCache.set(message, conditions);
  }
  return conditions;
}

// ---- message encode / decode ----

/**
 * Encode physical values into a payload of `message.length` bytes. Signals absent from `values`
 * are raw 0; a multiplexed signal is written only when its switches' values (as given, or 0)
 * select it. Values are rounded to the nearest raw step.
 */
export function encodeMessage(message: DbcMessage, values: Record<string, number>): Uint8Array {
  const data = new Uint8Array(message.length);
  const conditions = cachedConditions(message);
  const raws = message.signals.map((s) => {
    const value = values[s.name];
    return value === undefined ? 0 : physicalToRaw(s, value);
  });
  const active = activeSignals(conditions, (i) => raws[i]!);
  message.signals.forEach((s, i) => {
    if (!active[i]) return;
    if (values[s.name] === undefined) return;
    const raw = raws[i]!;
    if (s.valueType === 'integer') {
      const lo = s.signed ? -(2 ** (s.length - 1)) : 0;
      const hi = s.signed ? 2 ** (s.length - 1) - 1 : 2 ** s.length - 1;
      if (!(raw >= lo && raw <= hi)) {
        throw new RangeError(
          `${message.name}.${s.name}: value ${values[s.name]} is raw ${raw}, outside the ${s.length}-bit range ${lo}..${hi}`,
        );
      }
    }
    insertSignalRaw(data, s, raw);
  });
  return data;
}

function decodedSignal(signal: DbcSignal, raw: number): DecodedSignal {
  const out: DecodedSignal = { name: signal.name, raw, value: rawToPhysical(signal, raw), unit: signal.unit };
  const label = signal.valueTable?.get(raw);
  if (label !== undefined) out.label = label;
  return out;
}

/**
 * Decode the signals present in `data`: only those selected by the frame's multiplexer values
 * (including extended multiplexing) and only those that fit in the payload's length.
 */
export function decodeMessage(message: DbcMessage, data: Uint8Array): DecodedSignal[] {
  const conditions = cachedConditions(message);
  const raws = new Map<number, number>();
  const rawOf = (i: number): number => {
    let raw = raws.get(i);
    if (raw === undefined) {
      const s = message.signals[i]!;
      raw = signalEndByte(s) <= data.length ? extractSignalRaw(data, s) : Number.NaN;
      raws.set(i, raw);
    }
    return raw;
  };
  const active = activeSignals(conditions, rawOf);
  const out: DecodedSignal[] = [];
  message.signals.forEach((s, i) => {
    if (!active[i] || signalEndByte(s) > data.length) return;
    out.push(decodedSignal(s, rawOf(i)));
  });
  return out;
}

// ---- compiled decoder ----

/** Reads one signal's raw value from a payload long enough to hold it. */
export type Extractor = (d: Uint8Array) => number;

/** A closure specialised for one signal's byte span, order and sign. */
function compileExtractor(signal: DbcSignal): Extractor {
  if (signal.valueType !== 'integer') return (d) => extractSignalRaw(d, signal);
  const { loByte, hiByte, shift } = span(signal);
  const len = signal.length;
  const signed = signal.signed;
  const little = signal.byteOrder === 'little_endian';
  const nBytes = hiByte - loByte + 1;
  if (nBytes === 1) {
    const mask = (1 << len) - 1;
    const k = loByte;
    const sign = 1 << (len - 1);
    if (signed) return (d) => (((d[k]! >> shift) & mask) ^ sign) - sign;
    return (d) => (d[k]! >> shift) & mask;
  }
  if (nBytes <= 4 && len <= 31 + (signed ? 1 : 0)) {
    // 32-bit integer arithmetic.
    const a = little ? hiByte : loByte;
    const step = little ? -1 : 1;
    const signShift = 32 - len;
    const mask = len === 32 ? -1 : (1 << len) - 1;
    if (nBytes === 2) {
      const b = a + step;
      if (signed) return (d) => ((((d[a]! << 8) | d[b]!) >> shift) << signShift) >> signShift;
      return (d) => (((d[a]! << 8) | d[b]!) >> shift) & mask;
    }
    if (nBytes === 3) {
      const b = a + step;
      const c = b + step;
      if (signed) return (d) => ((((d[a]! << 16) | (d[b]! << 8) | d[c]!) >> shift) << signShift) >> signShift;
      return (d) => (((d[a]! << 16) | (d[b]! << 8) | d[c]!) >> shift) & mask;
    }
    const b = a + step;
    const c = b + step;
    const e = c + step;
    if (signed)
      return (d) =>
        ((((d[a]! << 24) | (d[b]! << 16) | (d[c]! << 8) | d[e]!) >>> shift) << signShift) >> signShift;
    return (d) => (((d[a]! << 24) | (d[b]! << 16) | (d[c]! << 8) | d[e]!) >>> shift) & mask;
  }
  if (nBytes === 4 && len === 32) {
    const a = little ? hiByte : loByte;
    const step = little ? -1 : 1;
    const b = a + step;
    const c = b + step;
    const e = c + step;
    return (d) => ((d[a]! << 24) | (d[b]! << 16) | (d[c]! << 8) | d[e]!) >>> 0;
  }
  return (d) => extractRaw(d, signal);
}

/** One signal of a compiled message: its extraction closure and what decoding it needs. */
export interface CompiledSignal {
  signal: DbcSignal;
  name: string;
  unit: string;
  factor: number;
  offset: number;
  endByte: number;
  extract: Extractor;
  labels: Map<number, string> | undefined;
  condition: MuxCondition | undefined;
}

export interface CompiledMessage {
  message: DbcMessage;
  signals: CompiledSignal[];
  multiplexed: boolean;
}

export type CompiledDecoder = (id: number, extended: boolean, data: Uint8Array) => DecodedMessage | undefined;

/** Lookup key of a message: 29-bit ids and 11-bit ids live in separate halves. */
export function messageKey(id: number, extended: boolean): number {
  return extended ? id + 0x100000000 : id;
}

/**
 * Every message of `db` compiled into per-signal extraction closures, keyed by messageKey; of
 * messages sharing an id, the first one is kept (the one a frame decodes with).
 */
export function compileMessages(db: DbcDatabase): Map<number, CompiledMessage> {
  const table = new Map<number, CompiledMessage>();
  for (const message of db.messages) {
    const key = messageKey(message.id, message.extended);
    if (table.has(key)) continue;
    const conditions = muxConditions(message);
    const signals = message.signals.map((signal, i): CompiledSignal => ({
      signal,
      name: signal.name,
      unit: signal.unit,
      factor: signal.factor,
      offset: signal.offset,
      endByte: signalEndByte(signal),
      extract: compileExtractor(signal),
      labels: signal.valueTable && signal.valueTable.size > 0 ? signal.valueTable : undefined,
      condition: conditions[i],
    }));
    table.set(key, { message, signals, multiplexed: conditions.some((c) => c !== undefined) });
  }
  return table;
}

/**
 * The signals of a multiplexed message that `data` carries (selected by its switches' values and
 * lying inside the payload), with the raw values read on the way (undefined where none was read).
 */
export function presentSignals(
  compiled: CompiledMessage,
  data: Uint8Array,
): { present: boolean[]; raws: Array<number | undefined> } {
  const conditions = compiled.signals.map((s) => s.condition);
  const raws: Array<number | undefined> = new Array(compiled.signals.length);
  const rawOf = (i: number): number => {
    let raw = raws[i];
    if (raw === undefined) {
      const s = compiled.signals[i]!;
      raw = s.endByte <= data.length ? s.extract(data) : Number.NaN;
      raws[i] = raw;
    }
    return raw;
  };
  const present = activeSignals(conditions, rawOf);
  for (let i = 0; i < present.length; i++) {
    if (compiled.signals[i]!.endByte > data.length) present[i] = false;
  }
  return { present, raws };
}

/**
 * Precompile every message of `db` into per-signal extraction closures and return a decoder that
 * looks a frame up by (id, extended) and decodes it like decodeMessage, or returns undefined for
 * an id the database does not define.
 */
export function compileDecoder(db: DbcDatabase): CompiledDecoder {
  const table = compileMessages(db);

  const decodeMultiplexed = (compiled: CompiledMessage, data: Uint8Array): DecodedSignal[] => {
    const { present, raws } = presentSignals(compiled, data);
    const out: DecodedSignal[] = [];
    for (let i = 0; i < compiled.signals.length; i++) {
      if (!present[i]) continue;
      const s = compiled.signals[i]!;
      const raw = raws[i] ?? s.extract(data);
      const decoded: DecodedSignal = { name: s.name, raw, value: raw * s.factor + s.offset, unit: s.unit };
      if (s.labels) {
        const label = s.labels.get(raw);
        if (label !== undefined) decoded.label = label;
      }
      out.push(decoded);
    }
    return out;
  };

  return (id, extended, data) => {
    const compiled = table.get(extended ? id + 0x100000000 : id);
    if (compiled === undefined) return undefined;
    if (compiled.multiplexed)
      return { message: compiled.message, signals: decodeMultiplexed(compiled, data) };
    const signals = compiled.signals;
    const out: DecodedSignal[] = [];
    const n = data.length;
    for (let i = 0; i < signals.length; i++) {
      const s = signals[i]!;
      if (s.endByte > n) continue;
      const raw = s.extract(data);
      if (s.labels !== undefined) {
        const label = s.labels.get(raw);
        if (label !== undefined) {
          out.push({ name: s.name, raw, value: raw * s.factor + s.offset, unit: s.unit, label });
          continue;
        }
      }
      out.push({ name: s.name, raw, value: raw * s.factor + s.offset, unit: s.unit });
    }
    return { message: compiled.message, signals: out };
  };
}

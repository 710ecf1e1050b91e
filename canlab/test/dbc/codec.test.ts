import { loadDbc, parseDbc } from '../../src/dbc/parse';
import {
  compileDecoder,
  decodeMessage,
  encodeMessage,
  extractRaw,
  extractRawBigInt,
  insertRaw,
  muxConditions,
  signalEndByte,
  type DecodedSignal,
  type RawSpec,
} from '../../src/dbc/codec';
import type { DbcDatabase, DbcMessage, DbcSignal } from '../../src/dbc/model';
import { fixture } from '../fixtures';
import { bytes, fixtureDbcs, hex } from './helpers';

function message(db: DbcDatabase, name: string): DbcMessage {
  const m = db.messages.find((x) => x.name === name);
  if (!m) throw new Error(`no message ${name}`);
  return m;
}

function asRecord(signals: DecodedSignal[]): Record<string, number> {
  return Object.fromEntries(signals.map((s) => [s.name, s.value]));
}

const BE = (startBit: number, length: number, signed = false): RawSpec => ({
  startBit,
  length,
  byteOrder: 'big_endian',
  signed,
});
const LE = (startBit: number, length: number, signed = false): RawSpec => ({
  startBit,
  length,
  byteOrder: 'little_endian',
  signed,
});

describe('extractRaw / insertRaw', () => {
  test('Motorola start bit is the MSB in sawtooth numbering', () => {
    // 16 bits from bit 7 of byte 0: plain big-endian bytes.
    expect(extractRaw(bytes('1234000000000000'), BE(7, 16))).toBe(0x1234);
    // 12 bits whose MSB is bit 3 of byte 0: low nibble of byte 0, then all of byte 1.
    expect(extractRaw(bytes('0abc'), BE(3, 12))).toBe(0xabc);
    // MSB at bit 0 of byte 0, continues at bit 7 of byte 1 (motohawk Temperature).
    expect(extractRaw(bytes('010000'), BE(0, 12))).toBe(0x800);
    expect(extractRaw(bytes('00ffe0'), BE(0, 12))).toBe(0x7ff);
    // Not the LSB: an LSB reading of start bit 3 would give a different value.
    const data = new Uint8Array(2);
    insertRaw(data, BE(3, 12), 0xabc);
    expect(hex(data)).toBe('0abc');
    const one = new Uint8Array(8);
    insertRaw(one, BE(39, 1), 1);
    expect(hex(one)).toBe('0000000080000000');
  });

  test('Intel start bit is the LSB', () => {
    expect(extractRaw(bytes('c0ab'), LE(4, 12))).toBe(0xabc);
    const data = new Uint8Array(2);
    insertRaw(data, LE(4, 12), 0xabc);
    expect(hex(data)).toBe('c0ab');
    expect(extractRaw(bytes('0000000000000080'), LE(63, 1))).toBe(1);
  });

  test('insertRaw leaves the other bits alone', () => {
    const data = bytes('ffffffff');
    insertRaw(data, LE(4, 8), 0);
    expect(hex(data)).toBe('0ff0ffff');
    const be = bytes('ffffffff');
    insertRaw(be, BE(3, 8), 0);
    expect(hex(be)).toBe('f00fffff');
  });

  test('signed two complement', () => {
    expect(extractRaw(bytes('fe'), LE(1, 7, true))).toBe(-1);
    expect(extractRaw(bytes('80'), LE(0, 8, true))).toBe(-128);
    expect(extractRaw(bytes('7f'), LE(0, 8, true))).toBe(127);
    expect(extractRaw(bytes('ffff'), BE(7, 16, true))).toBe(-1);
    expect(extractRaw(bytes('8000'), BE(7, 16, true))).toBe(-32768);
    const data = new Uint8Array(2);
    insertRaw(data, BE(3, 12, true), -2);
    expect(hex(data)).toBe('0ffe');
    expect(extractRaw(data, BE(3, 12, true))).toBe(-2);
  });

  test('64-bit signals are exact through BigInt', () => {
    const le = new Uint8Array(8);
    insertRaw(le, LE(0, 64), 0x0123456789abcdefn);
    expect(hex(le)).toBe('efcdab8967452301');
    expect(extractRawBigInt(le, LE(0, 64))).toBe(0x0123456789abcdefn);
    const be = new Uint8Array(8);
    insertRaw(be, BE(7, 64), 0x0123456789abcdefn);
    expect(hex(be)).toBe('0123456789abcdef');
    expect(extractRawBigInt(be, BE(7, 64))).toBe(0x0123456789abcdefn);
    expect(extractRawBigInt(bytes('ffffffffffffffff'), LE(0, 64, true))).toBe(-1n);
    expect(extractRaw(bytes('ffffffffffffffff'), LE(0, 64, true))).toBe(-1);
    // 63-bit big endian starting at bit 6.
    const b63 = new Uint8Array(8);
    insertRaw(b63, BE(6, 63, true), -5n);
    expect(extractRawBigInt(b63, BE(6, 63, true))).toBe(-5n);
    expect(b63[0]! & 0x80).toBe(0);
  });

  test('CAN FD payload: a signal in byte 60', () => {
    const data = new Uint8Array(64);
    insertRaw(data, LE(484, 12), 0xabc);
    expect(data[60]).toBe(0xc0);
    expect(data[61]).toBe(0xab);
    expect(extractRaw(data, LE(484, 12))).toBe(0xabc);
    insertRaw(data, BE(503, 16), 0x1234);
    expect([data[62], data[63]]).toEqual([0x12, 0x34]);
    expect(extractRaw(data, BE(503, 16))).toBe(0x1234);
  });

  test('insertRaw refuses a signal beyond the payload', () => {
    expect(() => insertRaw(new Uint8Array(2), LE(12, 8), 1)).toThrow(RangeError);
  });
});

describe('known answers', () => {
  test('motohawk ExampleMessage (cantools)', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'motohawk.dbc'));
    const m = message(db, 'ExampleMessage');
    const data = encodeMessage(m, { Temperature: 250.55, AverageRadius: 3.2, Enable: 1 });
    expect(hex(data)).toBe('c006e00000000000');
    const decoded = decodeMessage(m, data);
    expect(decoded.map((s) => s.name)).toEqual(['Temperature', 'AverageRadius', 'Enable']);
    expect(decoded[0]!.raw).toBe(55);
    expect(decoded[0]!.value).toBeCloseTo(250.55, 10);
    expect(decoded[0]!.unit).toBe('degK');
    expect(decoded[1]).toMatchObject({ raw: 32, unit: 'm' });
    expect(decoded[1]!.value).toBeCloseTo(3.2, 10);
    expect(decoded[2]).toEqual({ name: 'Enable', raw: 1, value: 1, unit: '-', label: 'Enabled' });
    // Raw 3 / 2 / 1 (cantools' no-scaling case).
    expect(hex(encodeMessage(m, { Temperature: 250.03, AverageRadius: 0.2, Enable: 1 }))).toBe(
      '8400600000000000',
    );
    // Negative temperature raw.
    const cold = encodeMessage(m, { Temperature: 229.52 });
    expect(decodeMessage(m, cold)[0]!.raw).toBe(-2048);
  });

  test('socialledge: little endian, value tables, multiplexed sonar message', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'socialledge.dbc'));
    const hb = message(db, 'DRIVER_HEARTBEAT');
    expect(decodeMessage(hb, bytes('01'))).toEqual([
      { name: 'DRIVER_HEARTBEAT_cmd', raw: 1, value: 1, unit: '', label: 'DRIVER_HEARTBEAT_cmd_SYNC' },
    ]);
    const sonar = message(db, 'SENSOR_SONARS');
    const data = encodeMessage(sonar, {
      SENSOR_SONARS_mux: 1,
      SENSOR_SONARS_err_count: 2,
      SENSOR_SONARS_no_filt_left: 1.5,
      SENSOR_SONARS_left: 9,
    });
    const decoded = asRecord(decodeMessage(sonar, data));
    expect(Object.keys(decoded)).toEqual([
      'SENSOR_SONARS_mux',
      'SENSOR_SONARS_err_count',
      'SENSOR_SONARS_no_filt_left',
      'SENSOR_SONARS_no_filt_middle',
      'SENSOR_SONARS_no_filt_right',
      'SENSOR_SONARS_no_filt_rear',
    ]);
    expect(decoded.SENSOR_SONARS_no_filt_left).toBeCloseTo(1.5, 10);
    expect(hex(data)).toBe('21000f0000000000');
  });

  test('float32 and float64 signals', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'floating_point.dbc'));
    const m1 = message(db, 'Message1');
    const d1 = encodeMessage(m1, { Signal1: -2.5 });
    expect(hex(d1)).toBe('00000000000004c0');
    expect(decodeMessage(m1, d1)[0]!.value).toBe(-2.5);
    const m2 = message(db, 'Message2');
    const d2 = encodeMessage(m2, { Signal1: 1, Signal2: 0.1 });
    expect(hex(d2)).toBe('0000803fcdcccc3d');
    const values = asRecord(decodeMessage(m2, d2));
    expect(values.Signal1).toBe(1);
    expect(values.Signal2).toBeCloseTo(0.1, 7);
  });

  test('simple multiplexing: only the selected signals decode (multiplex.dbc)', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'multiplex.dbc'));
    const m = message(db, 'Message1');
    expect(m).toMatchObject({ id: 0x123456, extended: true });
    const data = encodeMessage(m, { Multiplexor: 8, BIT_J: 1, BIT_C: 1, BIT_G: 1, BIT_L: 1, BIT_A: 1 });
    expect(hex(data)).toBe('20008c0100000000');
    expect(asRecord(decodeMessage(m, data))).toEqual({
      BIT_L: 1,
      BIT_G: 1,
      BIT_C: 1,
      BIT_J: 1,
      Multiplexor: 8,
    });
    // Value 24 selects the m24 signals and, via SG_MUL_VAL_, the m8 ones as well.
    const d24 = encodeMessage(m, { Multiplexor: 24, BIT_A: 1, BIT_L: 1 });
    const names = decodeMessage(m, d24).map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['BIT_K', 'BIT_A', 'BIT_L', 'BIT_J']));
    expect(names).toHaveLength(12);
    expect(decodeMessage(m, encodeMessage(m, { Multiplexor: 4 })).map((s) => s.name)).toEqual([
      'Multiplexor',
    ]);
  });

  test('extended multiplexing: nested switches (multiplex_2.dbc Extended)', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'multiplex_2.dbc'));
    const m = message(db, 'Extended');
    const names = (values: Record<string, number>): string[] =>
      decodeMessage(m, encodeMessage(m, values))
        .map((s) => s.name)
        .sort();
    expect(names({ S0: 0, S1: 0, S2: 5, S3: -7, S6: 1, S7: 3 })).toEqual([
      'S0',
      'S1',
      'S2',
      'S3',
      'S6',
      'S7',
    ]);
    expect(names({ S0: 0, S1: 2, S4: 5, S6: 2, S8: 3 })).toEqual(['S0', 'S1', 'S4', 'S6', 'S8']);
    expect(names({ S0: 1, S5: 5, S6: 0 })).toEqual(['S0', 'S5', 'S6']);
    // S1 is itself only present when S0 is 0, so S2 follows it out.
    expect(names({ S0: 1, S1: 0 })).toEqual(['S0', 'S5', 'S6']);
    const decoded = asRecord(
      decodeMessage(m, encodeMessage(m, { S0: 0, S1: 0, S2: 5, S3: -7, S6: 1, S7: -300 })),
    );
    expect(decoded).toEqual({ S0: 0, S1: 0, S2: 5, S3: -7, S6: 1, S7: -300 });
    const shared = message(db, 'Shared');
    const sharedNames = (s0: number): string[] =>
      decodeMessage(shared, encodeMessage(shared, { S0: s0 })).map((s) => s.name);
    expect(sharedNames(1)).toEqual(['S1', 'S0']);
    expect(sharedNames(3)).toEqual(['S2', 'S1', 'S0']);
    expect(sharedNames(5)).toEqual(['S2', 'S0']);
    expect(sharedNames(6)).toEqual(['S0']);
  });

  test('signals past the end of a short payload are left out', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'motohawk.dbc'));
    const m = message(db, 'ExampleMessage');
    expect(decodeMessage(m, bytes('c0')).map((s) => s.name)).toEqual(['AverageRadius', 'Enable']);
  });

  test('encodeMessage rejects a value that does not fit the bits', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'motohawk.dbc'));
    expect(() => encodeMessage(message(db, 'ExampleMessage'), { AverageRadius: 6.4 })).toThrow(
      /outside the 6-bit range/,
    );
  });

  test('a CAN FD message of 64 bytes', () => {
    const db = parseDbc(
      'VERSION ""\nNS_ :\nBS_:\nBU_: A\n' +
        'BO_ 2147483905 Fd: 64 A\n SG_ Head : 0|8@1+ (1,0) [0|0] "" A\n SG_ Tail : 503|16@0- (0.5,0) [0|0] "V" A\n' +
        'BA_DEF_ BO_ "VFrameFormat" ENUM "StandardCAN","ExtendedCAN","reserved","reserved","reserved","reserved",' +
        '"reserved","reserved","reserved","reserved","reserved","reserved","reserved","reserved","StandardCAN_FD","ExtendedCAN_FD";\n' +
        'BA_ "VFrameFormat" BO_ 2147483905 15;\n',
    );
    const m = db.messages[0]!;
    expect(m).toMatchObject({ id: 0x101, extended: true, length: 64, attributes: { VFrameFormat: 15 } });
    const data = encodeMessage(m, { Head: 7, Tail: -100.5 });
    expect(data.length).toBe(64);
    expect(asRecord(decodeMessage(m, data))).toEqual({ Head: 7, Tail: -100.5 });
    const decode = compileDecoder(db);
    expect(decode(0x101, true, data)?.signals).toEqual(decodeMessage(m, data));
    expect(decode(0x101, false, data)).toBeUndefined();
  });
});

// ---- encode → decode over every fixture message ----

function rawBounds(s: DbcSignal): [number, number] {
  const len = Math.min(s.length, 40);
  let lo = s.signed ? -(2 ** (len - 1)) : 0;
  let hi = s.signed ? 2 ** (len - 1) - 1 : 2 ** len - 1;
  if (s.minimum < s.maximum && s.factor !== 0) {
    const a = (s.minimum - s.offset) / s.factor;
    const b = (s.maximum - s.offset) / s.factor;
    const pLo = Math.ceil(Math.min(a, b) - 1e-9);
    const pHi = Math.floor(Math.max(a, b) + 1e-9);
    if (Math.max(lo, pLo) <= Math.min(hi, pHi)) {
      lo = Math.max(lo, pLo);
      hi = Math.min(hi, pHi);
    }
  }
  return [lo, hi];
}

/** Deterministic pseudo-random generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pickPhysical(s: DbcSignal, random: () => number): number {
  if (s.valueType !== 'integer') return (Math.floor(random() * 2000) - 1000) / 8;
  const [lo, hi] = rawBounds(s);
  const raw = lo + Math.floor(random() * (hi - lo + 1));
  return raw * s.factor + s.offset;
}

/** Bits a signal occupies, as a mask payload. */
function occupancy(message: DbcMessage, s: DbcSignal): Uint8Array {
  const mask = new Uint8Array(Math.max(message.length, 64));
  insertRaw(mask, s, -1n);
  return mask;
}

function overlaps(a: Uint8Array, b: Uint8Array): boolean {
  for (let i = 0; i < a.length; i++) if (a[i]! & b[i]!) return true;
  return false;
}

/** Switch settings to try: none, plus one per value any signal needs to be selected. */
function scenarios(message: DbcMessage): Array<Map<number, number>> {
  const conditions = muxConditions(message);
  const out: Array<Map<number, number>> = [new Map()];
  conditions.forEach((cond, i) => {
    if (!cond) return;
    const setting = new Map<number, number>();
    let c: typeof cond | undefined = cond;
    let guard = 0;
    let target = i;
    while (c && guard++ < 10) {
      const range = c.ranges[(target * 7) % c.ranges.length]!;
      setting.set(c.switchIndex, range[1]);
      target = c.switchIndex;
      c = conditions[c.switchIndex];
    }
    out.push(setting);
  });
  return out;
}

function expectedActive(message: DbcMessage, setting: Map<number, number>): boolean[] {
  const conditions = muxConditions(message);
  const active = (i: number, depth: number): boolean => {
    const c = conditions[i];
    if (!c) return true;
    if (depth > 10) return false;
    const v = setting.get(c.switchIndex) ?? 0;
    return active(c.switchIndex, depth + 1) && c.ranges.some(([lo, hi]) => v >= lo && v <= hi);
  };
  return message.signals.map((_, i) => active(i, 0));
}

describe('encode → decode round trip over every fixture message', () => {
  test.each(fixtureDbcs())('%s', async (_label, path) => {
    const db = await loadDbc(path);
    const random = rng(12345);
    const decoder = compileDecoder(db);
    const checked = new Set<string>();
    for (const m of db.messages) {
      for (const scenario of scenarios(m)) {
        // Switches not set by the scenario are raw 0.
        const setting = new Map(scenario);
        m.signals.forEach((s, i) => {
          if (s.isMultiplexer && !setting.has(i)) setting.set(i, 0);
        });
        const active = expectedActive(m, setting);
        const values: Record<string, number> = {};
        const switchValues: Record<string, number> = {};
        for (const [idx, raw] of setting) {
          const sw = m.signals[idx]!;
          if (active[idx]) switchValues[sw.name] = raw * sw.factor + sw.offset;
        }
        Object.assign(values, switchValues);
        // Signals that overlap another active one are checked on their own.
        const used = new Uint8Array(Math.max(m.length, 64));
        for (const [idx] of setting) {
          const occ = occupancy(m, m.signals[idx]!);
          for (let k = 0; k < used.length; k++) used[k] = used[k]! | occ[k]!;
        }
        const alone: DbcSignal[] = [];
        m.signals.forEach((s, i) => {
          // A signal the file places past the end of its message (opendbc has some) cannot be encoded.
          if (!active[i] || setting.has(i) || s.factor === 0 || signalEndByte(s) > m.length) return;
          const occ = occupancy(m, s);
          if (overlaps(used, occ)) {
            alone.push(s);
            return;
          }
          for (let k = 0; k < used.length; k++) used[k] = used[k]! | occ[k]!;
          values[s.name] = pickPhysical(s, random);
        });
        const runs: Array<Record<string, number>> = [values];
        for (const s of alone) {
          const single: Record<string, number> = { ...switchValues };
          single[s.name] = pickPhysical(s, random);
          runs.push(single);
        }
        for (const run of runs) {
          const data = encodeMessage(m, run);
          expect(data.length).toBe(m.length);
          const decoded = decodeMessage(m, data);
          expect(decoder(m.id, m.extended, data)?.signals).toEqual(decoded);
          const byName = new Map(decoded.map((d) => [d.name, d]));
          const expectedNames = m.signals
            .filter((s, i) => active[i] && signalEndByte(s) <= m.length)
            .map((s) => s.name);
          expect(decoded.map((d) => d.name)).toEqual(expectedNames);
          for (const [name, value] of Object.entries(run)) {
            const s = m.signals.find((x) => x.name === name)!;
            const got = byName.get(name);
            if (!got) throw new Error(`${m.name}.${name} missing from the decode`);
            const tolerance =
              s.valueType === 'integer' ? Math.abs(s.factor) / 2 + Math.abs(value) * 1e-12 : 1e-6;
            if (Math.abs(got.value - value) > tolerance) {
              throw new Error(`${m.name}.${name}: encoded ${value}, decoded ${got.value}`);
            }
            checked.add(`${m.name}.${name}`);
          }
        }
      }
    }
    // Every signal that fits its message was encoded and decoded at least once.
    const all = db.messages.flatMap((m) =>
      m.signals
        .filter((s) => s.factor !== 0 && signalEndByte(s) <= m.length)
        .map((s) => `${m.name}.${s.name}`),
    );
    expect([...new Set(all)].filter((name) => !checked.has(name))).toEqual([]);
  });
});

describe('compileDecoder', () => {
  test('agrees with decodeMessage on random payloads of every fixture message', async () => {
    const random = rng(99);
    for (const [, path] of fixtureDbcs()) {
      const db = await loadDbc(path);
      const decode = compileDecoder(db);
      for (const m of db.messages) {
        for (let n = 0; n < 20; n++) {
          const data = new Uint8Array(m.length);
          for (let i = 0; i < data.length; i++) data[i] = Math.floor(random() * 256);
          const got = decode(m.id, m.extended, data);
          const first = db.messages.find((x) => x.id === m.id && x.extended === m.extended)!;
          expect(got?.message).toBe(first);
          expect(got?.signals).toEqual(decodeMessage(first, data));
        }
      }
    }
  });

  test('unknown ids return undefined; standard and extended ids are distinct', async () => {
    const db = await loadDbc(fixture('dbc-cantools', 'fd_test.dbc'));
    const decode = compileDecoder(db);
    expect(decode(3, true, new Uint8Array(8))?.message.name).toBe('TestMsg_Ex');
    expect(decode(3, false, new Uint8Array(8))).toBeUndefined();
    expect(decode(0, true, bytes('ff00000000000000'))?.signals).toEqual([
      { name: 'TestSig', raw: -1, value: -1, unit: '' },
    ]);
  });
});

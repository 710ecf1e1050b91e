/**
 * Rows of `canlab decode`'s CSV, formatted fast: every message is compiled once into its row head
 * and one cell formatter per signal, and a signal keeps the bytes of the cells it has written by
 * raw value (a signal's cell depends on nothing else), so the number formatting, the value-table
 * lookup, the quoting and the encoding run once per distinct raw value instead of once per frame
 * (up to limits, past which cells are formatted every time). The layout is documented in
 * src/cli/commands/decode.ts; the bytes are what the first implementation wrote
 * (test/dbc/decoded-csv.test.ts compares both on real and generated captures).
 */
import {
  compileMessages,
  presentSignals,
  type CompiledMessage,
  type CompiledSignal,
  type Extractor,
} from './codec';
import type { DbcDatabase, DbcSignal } from './model';

/** Decimal places needed to show multiples of `x` exactly (0.25 → 2, 1E-5 → 5, 10 → 0). */
function decimalsOf(x: number): number {
  if (!Number.isFinite(x) || x === 0 || Number.isInteger(x)) return 0;
  const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
  const fraction = mantissa.split('.')[1]?.length ?? 0;
  return Math.min(15, Math.max(0, fraction - Number(exponent)));
}

function signalDecimals(signal: DbcSignal): number {
  if (signal.valueType !== 'integer') return -1;
  return Math.max(decimalsOf(signal.factor), decimalsOf(signal.offset));
}

/** Physical value text: rounded to `decimals` (-1: shortest round-trip form, for floats). */
export function formatPhysical(value: number, decimals: number): string {
  if (decimals <= 0 || !Number.isFinite(value) || Math.abs(value) >= 1e21) return String(value);
  return String(Number(value.toFixed(decimals)));
}

/** RFC 4180 quoting of a cell holding `,`, `"` or a line break. */
export function csvCell(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 44 || c === 34 || c === 10 || c === 13) return `"${text.replaceAll('"', '""')}"`;
  }
  return text;
}

/** `0x` + upper-case hex: 8 digits for a 29-bit id, 3 for an 11-bit one, so both stay distinct. */
export function idText(id: number, extended: boolean): string {
  return (
    '0x' +
    id
      .toString(16)
      .toUpperCase()
      .padStart(extended ? 8 : 3, '0')
  );
}

const MICROS_PER_SECOND = 1e6;

/**
 * The whole microseconds `timestamp.toFixed(6)` prints, computed without toFixed, or -1 where
 * toFixed must decide. The product timestamp × 10^6 is exact to within half a unit in its last
 * place, at most 0.125 µs below 2^51 µs (epoch seconds up to 2041), so a product within 0.3 µs of
 * a whole microsecond rounds to it whatever that error; halfway cases, negative and huge times
 * are left to toFixed.
 */
function wholeMicros(timestamp: number): number {
  const micros = timestamp * MICROS_PER_SECOND;
  const rounded = Math.round(micros);
  if (!(timestamp >= 0 && rounded < 2 ** 51) || Math.abs(micros - rounded) > 0.3) return -1;
  return rounded;
}

const encoder = new TextEncoder();

/** A cell's code is start × CODE_UNIT + length, in the arena. */
const CODE_UNIT = 1 << 16;
/** Bytes of cells the arena keeps at most; past it, new cells are formatted every time. */
const ARENA_BYTES = 1 << 26;
/** Raw values of a signal whose cells an array indexed by the value holds: from 0 up, or around 0 when signed. */
const DENSE_CELLS = 1 << 12;
/** Further raw values whose cells one signal keeps in a map; beyond, cells are formatted every time. */
const SPARSE_CELLS = 1 << 14;

/**
 * The bytes of the cells formatted so far, back to back in one array, so that writing a cell is a
 * copy out of memory the cache already holds (a typed array per cell cost a cache miss for the
 * object and one for its bytes, and made the copy the slowest part of a row).
 */
class CellArena {
  bytes = new Uint8Array(1 << 16);
  used = 0;

  /** Stores the cell's bytes and returns its code, or -1 when the arena is full or the cell too long. */
  add(encoded: Uint8Array): number {
    if (encoded.length >= CODE_UNIT || this.used + encoded.length > ARENA_BYTES) return -1;
    if (this.used + encoded.length > this.bytes.length) {
      const bigger = new Uint8Array(
        Math.min(ARENA_BYTES, Math.max(this.bytes.length * 2, this.used + encoded.length)),
      );
      bigger.set(this.bytes.subarray(0, this.used));
      this.bytes = bigger;
    }
    this.bytes.set(encoded, this.used);
    const code = this.used * CODE_UNIT + encoded.length;
    this.used += encoded.length;
    return code;
  }
}

/** One signal's cells, `,name=value` or `,name=value (label)` (quoted when need be), by raw value. */
class SignalCells {
  /** Counters, flags, enumerations and most narrow signals live here entirely. */
  private readonly dense: number[] = [];
  private readonly sparse = new Map<number, number>();
  private readonly prefix: string;
  /** The raw value at index 0 of `dense`; NaN for float signals, whose raws index nothing. */
  private readonly base: number;

  constructor(
    private readonly s: CompiledSignal,
    private readonly decimals: number,
    private readonly arena: CellArena,
  ) {
    this.prefix = `${s.name}=`;
    if (s.signal.valueType !== 'integer') this.base = Number.NaN;
    else this.base = s.signal.signed ? -DENSE_CELLS / 2 : 0;
  }

  /** The arena code of the cell for `raw`, or -1 when it is not kept (then write `bytes(raw)`). */
  code(raw: number): number {
    const index = raw - this.base;
    const dense = index >= 0 && index < DENSE_CELLS;
    let code = dense ? this.dense[index] : this.sparse.get(raw);
    if (code !== undefined) return code;
    if (!dense && this.sparse.size >= SPARSE_CELLS) return -1;
    code = this.arena.add(this.bytes(raw));
    if (code >= 0) {
      if (dense) this.dense[index] = code;
      else this.sparse.set(raw, code);
    }
    return code;
  }

  bytes(raw: number): Uint8Array {
    const value = formatPhysical(raw * this.s.factor + this.s.offset, this.decimals);
    const label = this.s.labels?.get(raw);
    return encoder.encode(
      ',' + csvCell(label === undefined ? this.prefix + value : `${this.prefix}${value} (${label})`),
    );
  }
}

interface RowFormat {
  /** `,0x1F0,ExampleMessage`: the row after the timestamp, up to the first signal. */
  head: Uint8Array;
  compiled: CompiledMessage;
  extract: Extractor[];
  endByte: number[];
  cells: SignalCells[];
}

const DIGIT_0 = 48;
const NEWLINE = 10;
/** Bytes held before the writer asks to be drained; a row longer than the rest grows the buffer. */
const OUTPUT_BYTES = 1 << 20;

/**
 * Writes decoded CSV rows into a byte buffer that the caller drains to a file: rows never exist as
 * strings, the timestamp's digits are written from its integer parts, and each cell is copied
 * from the arena of cells formatted before.
 */
export class DecodedCsvWriter {
  private readonly standard = new Map<number, RowFormat>();
  private readonly extended = new Map<number, RowFormat>();
  private readonly arena = new CellArena();
  private out = new Uint8Array(OUTPUT_BYTES);
  private pos = 0;
  private lastSeconds = -1;
  private lastSecondsBytes = new Uint8Array(0);

  constructor(db: DbcDatabase) {
    // Two tables keyed by the bare id keep the keys small integers, which maps look up fastest.
    for (const compiled of compileMessages(db).values()) {
      const { id, extended } = compiled.message;
      (extended ? this.extended : this.standard).set(id, this.rowFormat(compiled));
    }
    this.copy(encoder.encode(DECODED_CSV_HEADER));
  }

  private rowFormat(compiled: CompiledMessage): RowFormat {
    const { message, signals } = compiled;
    // One rounding per signal name, the first signal's, as the first implementation had it.
    const decimals = new Map<string, number>();
    for (const s of message.signals) if (!decimals.has(s.name)) decimals.set(s.name, signalDecimals(s));
    return {
      head: encoder.encode(`,${idText(message.id, message.extended)},${csvCell(message.name)}`),
      compiled,
      extract: signals.map((s) => s.extract),
      endByte: signals.map((s) => s.endByte),
      cells: signals.map((s) => new SignalCells(s, decimals.get(s.name)!, this.arena)),
    };
  }

  /** Appends the frame's row; false (and nothing written) for an id the DBC does not define. */
  add(timestamp: number, id: number, extended: boolean, data: Uint8Array): boolean {
    const format = (extended ? this.extended : this.standard).get(id);
    if (format === undefined) return false;
    this.timestamp(timestamp);
    this.copy(format.head);
    const { extract, endByte, cells } = format;
    if (format.compiled.multiplexed) {
      const { present, raws } = presentSignals(format.compiled, data);
      for (let i = 0; i < present.length; i++) {
        if (present[i]) this.cell(cells[i]!, raws[i] ?? extract[i]!(data));
      }
    } else {
      const n = data.length;
      for (let i = 0; i < extract.length; i++) {
        if (endByte[i]! <= n) this.cell(cells[i]!, extract[i]!(data));
      }
    }
    this.reserve(1);
    this.out[this.pos++] = NEWLINE;
    return true;
  }

  /** Whether enough bytes are held to be worth a write. */
  get full(): boolean {
    return this.pos >= OUTPUT_BYTES - 4096;
  }

  /** The bytes held so far, handed over: valid until the next add(), so write them before adding more. */
  take(): Uint8Array {
    const bytes = this.out.subarray(0, this.pos);
    this.pos = 0;
    return bytes;
  }

  /** The timestamp as `toFixed(6)` writes it, from its integer parts when wholeMicros allows. */
  private timestamp(timestamp: number): void {
    const micros = wholeMicros(timestamp);
    if (micros < 0) {
      this.copy(encoder.encode(timestamp.toFixed(6)));
      return;
    }
    const seconds = Math.floor(micros / MICROS_PER_SECOND);
    if (seconds !== this.lastSeconds) {
      this.lastSeconds = seconds;
      this.lastSecondsBytes = encoder.encode(`${seconds}.`);
    }
    this.copy(this.lastSecondsBytes);
    let fraction = micros - seconds * MICROS_PER_SECOND;
    this.reserve(6);
    const out = this.out;
    for (let i = this.pos + 5; i >= this.pos; i--) {
      const q = Math.floor(fraction / 10);
      out[i] = DIGIT_0 + fraction - q * 10;
      fraction = q;
    }
    this.pos += 6;
  }

  private cell(cells: SignalCells, raw: number): void {
    const code = cells.code(raw);
    if (code < 0) {
      this.copy(cells.bytes(raw));
      return;
    }
    // Codes pass 2^31 soon, so no integer operators: a floating-point modulo would cost a library call.
    const start = Math.floor(code / CODE_UNIT);
    const length = code - start * CODE_UNIT;
    this.reserve(length);
    const from = this.arena.bytes;
    const out = this.out;
    let p = this.pos;
    for (let i = start, end = start + length; i < end; i++) out[p++] = from[i]!;
    this.pos = p;
  }

  private copy(bytes: Uint8Array): void {
    const n = bytes.length;
    this.reserve(n);
    const out = this.out;
    let p = this.pos;
    for (let i = 0; i < n; i++) out[p++] = bytes[i]!;
    this.pos = p;
  }

  private reserve(n: number): void {
    if (this.pos + n <= this.out.length) return;
    const bigger = new Uint8Array(Math.max(this.out.length * 2, this.pos + n));
    bigger.set(this.out.subarray(0, this.pos));
    this.out = bigger;
  }
}

/** The CSV header line. */
export const DECODED_CSV_HEADER = 'timestamp,id,message,signals\n';

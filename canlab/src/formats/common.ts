/**
 * Shared plumbing for the capture readers and writers: chunked line reading (never the whole
 * file in memory), hex helpers, frame validation and a buffered text writer that honours
 * backpressure by awaiting the file handle.
 */
import { open, type FileHandle } from 'node:fs/promises';
import { CanlabInputError } from '../errors';
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';

/**
 * Frames per batch the text readers yield: small batches die young in V8's nursery, whereas a
 * whole 1 MiB chunk's worth would be promoted and cost major GCs (3x slower parsing).
 */
export const BATCH_FRAMES = 512;

/** Bytes read per chunk by the streaming readers. */
export const READ_CHUNK = 1 << 20;

/** What every writer returned by `createCaptureWriter` offers. */
export interface CaptureWriter {
  /** Queues one frame; the promise settles once the frame is buffered or written (awaits disk when the buffer is full). */
  write(frame: CanFrame): Promise<void>;
  /** Flushes and closes the file. Further writes are refused. */
  close(): Promise<void>;
}

/**
 * A run of complete lines inside `buf`: line i spans `starts[i]` to `ends[i]` (exclusive, without
 * the `\n` or a `\r` before it) and is line number `firstLine + i` of the file. `buf` is reused
 * for the next chunk, so consumers copy out whatever they keep.
 */
export interface LineChunk {
  buf: Buffer;
  starts: number[];
  ends: number[];
  count: number;
  firstLine: number;
}

/** Opens `file` for reading, turning the usual OS failures into located input errors. */
export async function openForRead(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'r');
  } catch (err) {
    throw ioError(file, err);
  }
}

/** Opens `file` for writing (truncating it), with located input errors for the usual OS failures. */
export async function openForWrite(file: string): Promise<FileHandle> {
  try {
    return await open(file, 'w');
  } catch (err) {
    throw ioError(file, err);
  }
}

/** Turns the usual OS failures (ENOENT, EACCES, EISDIR, ENOTDIR, EROFS) on `file` into located input errors; other errors pass through. */
export function ioError(file: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | undefined)?.code;
  const reasons: Record<string, string> = {
    ENOENT: 'no such file or directory',
    EACCES: 'permission denied',
    EISDIR: 'is a directory',
    ENOTDIR: 'a parent path is not a directory',
    EROFS: 'read-only file system',
  };
  if (code !== undefined && reasons[code] !== undefined) return new CanlabInputError(file, reasons[code]);
  return err;
}

/**
 * Streams `file` as chunks of complete lines, reading `chunkSize` bytes at a time with one
 * reused buffer (grown only when a single line is longer than it). Lines end at `eol` (a `\r`
 * before a `\n` is dropped); serial logs that end messages with a bare CR pass 13.
 */
export async function* lineChunks(file: string, chunkSize = READ_CHUNK, eol = 10): AsyncGenerator<LineChunk> {
  const fh = await openForRead(file);
  try {
    let buf = Buffer.allocUnsafe(chunkSize);
    let carry = 0;
    let lineNo = 1;
    const starts: number[] = [];
    const ends: number[] = [];
    for (;;) {
      if (carry === buf.length) {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, carry);
        buf = bigger;
      }
      const { bytesRead } = await fh.read(buf, carry, buf.length - carry, null);
      const len = carry + bytesRead;
      const eof = bytesRead === 0;
      starts.length = 0;
      ends.length = 0;
      const view = buf.subarray(0, len);
      let s = 0;
      for (;;) {
        const nl = view.indexOf(eol, s);
        if (nl < 0) break;
        starts.push(s);
        ends.push(nl > s && buf[nl - 1] === 13 ? nl - 1 : nl);
        s = nl + 1;
      }
      if (eof && s < len) {
        starts.push(s);
        ends.push(buf[len - 1] === 13 ? len - 1 : len);
        s = len;
      }
      if (starts.length > 0) {
        yield { buf, starts, ends, count: starts.length, firstLine: lineNo };
        lineNo += starts.length;
      }
      if (eof) return;
      if (s > 0) buf.copy(buf, 0, s, len);
      carry = len - s;
    }
  } finally {
    await fh.close();
  }
}

/** Streams `file` as decoded lines (latin1, so any byte survives) in batches, with line numbers. */
export async function* textLines(
  file: string,
  eol = 10,
): AsyncGenerator<{ lines: string[]; firstLine: number }> {
  for await (const chunk of lineChunks(file, READ_CHUNK, eol)) {
    // small batches, for the same nursery reason as BATCH_FRAMES
    for (let from = 0; from < chunk.count; from += BATCH_FRAMES) {
      const to = Math.min(chunk.count, from + BATCH_FRAMES);
      const lines = new Array<string>(to - from);
      for (let i = from; i < to; i++)
        lines[i - from] = chunk.buf.toString('latin1', chunk.starts[i]!, chunk.ends[i]!);
      yield { lines, firstLine: chunk.firstLine + from };
    }
  }
}

/**
 * Flattens batches of frames into single frames. A hand-written iterator rather than an async
 * generator: inside a batch `next()` hands back an already-resolved promise, which halves the
 * per-frame cost of `for await`.
 */
export function flatten(batches: AsyncIterable<CanFrame[]>): AsyncIterableIterator<CanFrame> {
  const source = batches[Symbol.asyncIterator]();
  let batch: CanFrame[] = [];
  let i = 0;
  let done = false;
  const pull = async (): Promise<IteratorResult<CanFrame>> => {
    while (!done) {
      const r = await source.next();
      if (r.done === true) {
        done = true;
        break;
      }
      batch = r.value;
      i = 0;
      if (batch.length > 0) return { value: batch[i++]!, done: false };
    }
    return { value: undefined, done: true };
  };
  const it: AsyncIterableIterator<CanFrame> = {
    next(): Promise<IteratorResult<CanFrame>> {
      if (i < batch.length) return Promise.resolve({ value: batch[i++]!, done: false });
      return pull();
    },
    async return(): Promise<IteratorResult<CanFrame>> {
      if (!done) {
        done = true;
        batch = [];
        await source.return?.();
      }
      return { value: undefined, done: true };
    },
    [Symbol.asyncIterator]() {
      return it;
    },
  };
  return it;
}

/** Splits on runs of spaces and tabs (faster than `split(/\s+/)`, no empty tokens). */
export function tokens(line: string): string[] {
  const out: string[] = [];
  const n = line.length;
  let i = 0;
  while (i < n) {
    let c = line.charCodeAt(i);
    while (i < n && (c === 32 || c === 9)) c = line.charCodeAt(++i);
    if (i >= n) break;
    const start = i;
    while (i < n && c !== 32 && c !== 9) c = line.charCodeAt(++i);
    out.push(line.slice(start, i));
  }
  return out;
}

/** Value of a hex digit char code, or -1. */
export function hexValue(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  const l = c | 0x20;
  if (l >= 97 && l <= 102) return l - 87;
  return -1;
}

/** Parses a whole token as hex; NaN when it is empty or holds a non-hex character. */
export function parseHex(token: string): number {
  if (token.length === 0 || token.length > 8) return NaN;
  let v = 0;
  for (let i = 0; i < token.length; i++) {
    const d = hexValue(token.charCodeAt(i));
    if (d < 0) return NaN;
    v = v * 16 + d;
  }
  return v;
}

/** Parses a whole token as a non-negative decimal integer; NaN otherwise. */
export function parseDec(token: string): number {
  if (token.length === 0 || token.length > 15) return NaN;
  let v = 0;
  for (let i = 0; i < token.length; i++) {
    const c = token.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return NaN;
    v = v * 10 + c;
  }
  return v;
}

const HEX2: string[] = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));

/** Two upper-case hex digits. */
export function hex2(byte: number): string {
  return HEX2[byte & 0xff]!;
}

/** Upper-case hex, zero-padded to `width`. */
export function hexPad(value: number, width: number): string {
  return value.toString(16).toUpperCase().padStart(width, '0');
}

/** Bytes as upper-case hex pairs joined by `sep`. */
export function hexBytes(data: Uint8Array, sep: string): string {
  let out = '';
  for (let i = 0; i < data.length; i++) {
    if (i > 0) out += sep;
    out += HEX2[data[i]!]!;
  }
  return out;
}

/**
 * `CanFrame.channel` counts from 0 (python-can's convention); ASC, BLF and TRC files number
 * channels from 1. Readers pass the stored number through this: stored N reads as N - 1. A stored
 * 0 is not a valid Vector/PEAK channel; it reads as 0 (python-can would give -1), so channel
 * numbers are never negative.
 */
export function channelFromFile(stored: number): number {
  return stored > 0 ? stored - 1 : 0;
}

/** The 1-based number ASC, BLF and TRC store for a 0-based `CanFrame.channel`. */
export function channelToFile(channel: number): number {
  return channel + 1;
}

/** A frame with every flag off; callers fill in the rest. */
export function makeFrame(partial: Partial<CanFrame> & Pick<CanFrame, 'timestamp' | 'id'>): CanFrame {
  return {
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: 0,
    data: new Uint8Array(0),
    channel: 0,
    ...partial,
  };
}

/**
 * Checks a frame before a writer serialises it: id range, DLC range, data length against the
 * DLC, a finite timestamp and a non-negative integer channel. Throws a RangeError naming the
 * frame; writers are fed by readers that already validated.
 */
export function checkFrame(frame: CanFrame): void {
  const max = frame.extended ? 0x1fffffff : 0x7ff;
  if (!frame.error && (!Number.isInteger(frame.id) || frame.id < 0 || frame.id > max)) {
    throw new RangeError(
      `frame id 0x${frame.id.toString(16)} does not fit a ${frame.extended ? '29' : '11'}-bit id`,
    );
  }
  if (!Number.isInteger(frame.dlc) || frame.dlc < 0 || frame.dlc > 15) {
    throw new RangeError(`frame 0x${frame.id.toString(16)} has DLC ${frame.dlc}, outside 0..15`);
  }
  if (!frame.remote && frame.data.length !== dlcToLength(frame.dlc, frame.fd)) {
    throw new RangeError(
      `frame 0x${frame.id.toString(16)} has ${frame.data.length} data bytes but DLC ${frame.dlc} means ${dlcToLength(frame.dlc, frame.fd)}`,
    );
  }
  if (!Number.isFinite(frame.timestamp))
    throw new RangeError(`frame 0x${frame.id.toString(16)} has no finite timestamp`);
  if (!Number.isInteger(frame.channel) || frame.channel < 0) {
    throw new RangeError(
      `frame 0x${frame.id.toString(16)} has channel ${frame.channel}; channels are integers counted from 0`,
    );
  }
}

/**
 * Buffered text output to a file handle. `push` collects text and, once 256 KiB are pending,
 * writes them and awaits the disk (this is the backpressure a caller sees through `write`).
 */
export class TextSink {
  private parts: string[] = [];
  private pending = 0;
  private closed = false;

  constructor(
    private readonly fh: FileHandle,
    private readonly file: string,
  ) {}

  static async open(file: string): Promise<TextSink> {
    return new TextSink(await openForWrite(file), file);
  }

  push(text: string): Promise<void> | undefined {
    if (this.closed) throw new Error(`${this.file} is already closed`);
    this.parts.push(text);
    this.pending += text.length;
    if (this.pending >= 1 << 18) return this.flush();
    return undefined;
  }

  async flush(): Promise<void> {
    if (this.parts.length === 0) return;
    const text = this.parts.join('');
    this.parts = [];
    this.pending = 0;
    await this.fh.write(text, null, 'latin1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    try {
      await this.flush();
    } finally {
      this.closed = true;
      await this.fh.close();
    }
  }
}

/** The lower-case extension of a path including the dot, or ''. */
export function extensionOf(file: string): string {
  const slash = Math.max(file.lastIndexOf('/'), file.lastIndexOf('\\'));
  const dot = file.lastIndexOf('.');
  return dot > slash + 1 ? file.slice(dot).toLowerCase() : '';
}

/** How many leading bytes of a file `readCapture` hands each format's `sniff`. */
export const SNIFF_BYTES = 1 << 16;

/** The first `bytes` bytes of `file` (fewer when it is shorter). */
export async function readHead(file: string, bytes = SNIFF_BYTES): Promise<Buffer> {
  const fh = await openForRead(file);
  try {
    const buf = Buffer.alloc(bytes);
    let len = 0;
    while (len < buf.length) {
      const { bytesRead } = await fh.read(buf, len, buf.length - len, len);
      if (bytesRead === 0) break;
      len += bytesRead;
    }
    return buf.subarray(0, len);
  } catch (err) {
    throw ioError(file, err);
  } finally {
    await fh.close();
  }
}

/**
 * The first `max` non-blank lines of a sniffed head (latin1, trimmed). A head cut at SNIFF_BYTES
 * drops its last line, which may be partial.
 */
export function headLines(head: Buffer, max = 40): string[] {
  const text = head.toString('latin1');
  const lines = text.split('\n');
  if (head.length >= SNIFF_BYTES) lines.pop();
  const out: string[] = [];
  for (const raw of lines) {
    const line = raw.trim();
    if (line.length === 0) continue;
    out.push(line);
    if (out.length === max) break;
  }
  return out;
}

/** Where a line-format parser is: the file and the 1-based line number (one object per read, updated in place). */
export interface LineAt {
  file: string;
  line: number;
}

/** An input error at `at`'s line. */
export function lineError(at: LineAt, message: string): CanlabInputError {
  return new CanlabInputError(`${at.file}:${at.line}`, message);
}

/**
 * A line-oriented text reader: `parse` gets each line (latin1, trimmed, never blank) with its
 * location and the per-file state `start` made, and returns a frame or null for a line that carries
 * none (a header, a comment, a status line). `end` runs after the last line, for checks that need
 * the whole file (a missing header).
 */
export interface LineFormat<S> {
  start(): S;
  parse(line: string, at: LineAt, state: S): CanFrame | null;
  end?(at: LineAt, state: S): void;
}

/** Reads a file with a LineFormat, as batches of frames. */
export async function* readLineBatches<S>(
  file: string,
  format: LineFormat<S>,
  eol = 10,
): AsyncGenerator<CanFrame[]> {
  const state = format.start();
  const at: LineAt = { file, line: 0 };
  for await (const { lines, firstLine } of textLines(file, eol)) {
    let out: CanFrame[] = [];
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!.trim();
      if (line.length === 0) continue;
      at.line = firstLine + i;
      const frame = format.parse(line, at, state);
      if (frame === null) continue;
      out.push(frame);
      if (out.length === BATCH_FRAMES) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
  format.end?.(at, state);
}

/** Splits `text` on `sep` into trimmed fields. */
export function fields(text: string, sep: string): string[] {
  const out = text.split(sep);
  for (let i = 0; i < out.length; i++) out[i] = out[i]!.trim();
  return out;
}

/** Parses a hex token with an optional 0x prefix; NaN when it is not hex. */
export function parseHex0x(token: string): number {
  return parseHex(token.startsWith('0x') || token.startsWith('0X') ? token.slice(2) : token);
}

/**
 * Parses `count` data bytes from `tokens[from..]` (two-digit hex each, an optional 0x prefix), naming
 * the first bad token.
 */
export function hexByteTokens(
  tokens: readonly string[],
  from: number,
  count: number,
  at: LineAt,
): Uint8Array {
  const data = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const tok = tokens[from + k] ?? '';
    const v = parseHex0x(tok);
    if (Number.isNaN(v) || v > 255) throw lineError(at, `bad data byte "${tok}"`);
    data[k] = v;
  }
  return data;
}

/** Parses an unbroken run of hex pairs (`DEADBEEF`) as bytes, or null when it is not one. */
export function hexRun(text: string): Uint8Array | null {
  if (text.length % 2 !== 0) return null;
  const data = new Uint8Array(text.length / 2);
  for (let k = 0; k < data.length; k++) {
    const hi = hexValue(text.charCodeAt(2 * k));
    const lo = hexValue(text.charCodeAt(2 * k + 1));
    if (hi < 0 || lo < 0) return null;
    data[k] = hi * 16 + lo;
  }
  return data;
}

/**
 * A data frame whose id came from a format without an extended flag: as SavvyCAN reads such
 * formats, an id above 0x7FF is a 29-bit id. More than 8 bytes make a CAN FD frame (a valid FD
 * length only; BRS and ESI unknown, so off).
 */
export function frameFromId(
  timestamp: number,
  id: number,
  data: Uint8Array,
  at: LineAt,
  extras: Partial<CanFrame> = {},
): CanFrame {
  if (!(id >= 0 && id <= 0x1fffffff)) throw lineError(at, `id 0x${id.toString(16)} is over 0x1FFFFFFF`);
  const fd = data.length > 8;
  if (fd && (data.length > 64 || dlcToLength(lengthToDlc(data.length, true), true) !== data.length))
    throw lineError(at, `${data.length} data bytes is neither a classic (0-8) nor a CAN FD length`);
  const frame = makeFrame({
    timestamp,
    id,
    extended: id > 0x7ff,
    fd,
    dlc: lengthToDlc(data.length, fd),
    data,
    ...extras,
  });
  if (!frame.extended && id > 0x7ff) throw lineError(at, `standard id 0x${id.toString(16)} is over 0x7FF`);
  return frame;
}

/**
 * can-utils `candump -l` log files (`.log`):
 *
 *     (1436509052.249713) vcan0 123#DEADBEEF
 *     (1436509052.249713) vcan0 12345678#R          remote, extended (8 hex digits)
 *     (1436509052.249713) vcan0 123#R5              remote with DLC 5
 *     (1436509052.249713) vcan0 123#1122334455667788_E   classic frame, DLC 14 (8 bytes)
 *     (1436509052.249713) vcan0 123##5AABB...       CAN FD, flags nibble BRS=1 ESI=2 FDF=4
 *     (1436509052.249713) vcan0 20000080#0000000000000000   error frame (CAN_ERR_FLAG 0x20000000)
 *     (1436509052.249713) vcan0 123#11 T           optional direction (`candump -x`): T/R
 *
 * Timestamps are epoch seconds with microsecond resolution. The channel is the trailing number of
 * the interface name (`vcan0` → 0, `can1` → 1: SocketCAN already counts from 0, as
 * `CanFrame.channel` does); a name without digits gets a number by order of first appearance
 * (0, 1, ...). The writer names channel N `canN`. Error frames keep the error
 * class bits (id & 0x1FFFFFFF) as `id`; candump cannot record an extended flag for them, so they
 * read back with `extended: false`.
 *
 * The parser works on the raw bytes of each chunk (no regex, no per-line strings) because this is
 * the format big captures come in.
 */
import { CanlabInputError } from '../errors';
import { lengthToDlc, type CanFrame } from '../frame';
import {
  BATCH_FRAMES,
  checkFrame,
  flatten,
  hex2,
  hexPad,
  lineChunks,
  TextSink,
  type CaptureWriter,
} from './common';

const CAN_ERR_FLAG = 0x20000000;
const FD_LENGTH_OK = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]);

/** Hex value of every byte value, -1 for non-hex. */
const HEX = new Int8Array(256).fill(-1);
for (let i = 0; i < 10; i++) HEX[48 + i] = i;
for (let i = 0; i < 6; i++) {
  HEX[65 + i] = 10 + i;
  HEX[97 + i] = 10 + i;
}
const POW10 = Array.from({ length: 20 }, (_, i) => 10 ** i);

/** Reads a candump log as batches of frames (one batch per read chunk). */
export async function* readCandumpBatches(file: string): AsyncGenerator<CanFrame[]> {
  const channels = new ChannelNames();
  for await (const chunk of lineChunks(file)) {
    const { buf, starts, ends } = chunk;
    let out: CanFrame[] = [];
    for (let i = 0; i < chunk.count; i++) {
      const frame = parseLine(buf, starts[i]!, ends[i]!, channels, file, chunk.firstLine + i);
      if (frame !== null) out.push(frame);
      // small batches die young in the GC's nursery; a whole chunk's worth would be promoted
      if (out.length === BATCH_FRAMES) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
}

/** Reads a candump log frame by frame. */
export function readCandump(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCandumpBatches(file));
}

/** Maps interface names to channel numbers, comparing bytes against the names seen so far (no strings per line). */
class ChannelNames {
  private names: Buffer[] = [];
  private channels: number[] = [];
  private byName = new Map<string, number>();
  private nextUnnumbered = 0;

  lookup(buf: Buffer, start: number, end: number): number {
    const len = end - start;
    const names = this.names;
    for (let n = 0; n < names.length; n++) {
      const name = names[n]!;
      if (name.length !== len) continue;
      let i = 0;
      while (i < len && buf[start + i] === name[i]) i++;
      if (i === len) return this.channels[n]!;
    }
    const name = buf.toString('latin1', start, end);
    let channel = this.byName.get(name);
    if (channel === undefined) {
      let d = name.length;
      while (d > 0 && name.charCodeAt(d - 1) >= 48 && name.charCodeAt(d - 1) <= 57) d--;
      channel = d < name.length ? Number(name.slice(d)) : this.nextUnnumbered++;
      this.byName.set(name, channel);
    }
    if (names.length < 16) {
      names.push(Buffer.from(buf.subarray(start, end)));
      this.channels.push(channel);
    }
    return channel;
  }
}

function fail(file: string, line: number, message: string): never {
  throw new CanlabInputError(`${file}:${line}`, message);
}

function parseLine(
  buf: Buffer,
  start: number,
  end: number,
  channels: ChannelNames,
  file: string,
  line: number,
): CanFrame | null {
  let p = start;
  while (p < end && (buf[p] === 32 || buf[p] === 9)) p++;
  if (p === end) return null; // blank line
  if (buf[p] !== 40 /* ( */) fail(file, line, 'expected "(timestamp) interface id#data"');
  p++;
  // timestamp: digits [. digits]
  let sec = 0;
  let digits = 0;
  let c = buf[p]!;
  while (p < end && c >= 48 && c <= 57) {
    sec = sec * 10 + (c - 48);
    digits++;
    c = buf[++p]!;
  }
  let frac = 0;
  let fracDigits = 0;
  if (p < end && c === 46 /* . */) {
    c = buf[++p]!;
    while (p < end && c >= 48 && c <= 57) {
      if (fracDigits < 17) {
        frac = frac * 10 + (c - 48);
        fracDigits++;
      }
      c = buf[++p]!;
    }
  }
  if (digits === 0 || p >= end || c !== 41 /* ) */)
    fail(file, line, 'bad timestamp, expected "(seconds.micros)"');
  const timestamp = fracDigits > 0 ? sec + frac / POW10[fracDigits]! : sec;
  p++;
  if (p >= end || (buf[p] !== 32 && buf[p] !== 9))
    fail(file, line, 'expected an interface name after the timestamp');
  while (p < end && (buf[p] === 32 || buf[p] === 9)) p++;
  const nameStart = p;
  while (p < end && buf[p] !== 32 && buf[p] !== 9) p++;
  if (p === nameStart || p >= end) fail(file, line, 'expected "interface id#data" after the timestamp');
  const channel = channels.lookup(buf, nameStart, p);
  while (p < end && (buf[p] === 32 || buf[p] === 9)) p++;
  // id
  const idStart = p;
  let rawId = 0;
  while (p < end) {
    const v = HEX[buf[p]!]!;
    if (v < 0) break;
    rawId = rawId * 16 + v;
    p++;
  }
  const idDigits = p - idStart;
  if (idDigits === 0 || p >= end || buf[p] !== 35 /* # */)
    fail(file, line, 'expected a hex id followed by "#"');
  if (idDigits > 8) fail(file, line, `id ${buf.toString('latin1', idStart, p)} has more than 8 hex digits`);
  p++;
  let extended = idDigits > 3;
  let error = false;
  let id = rawId;
  if (extended) {
    if (rawId & CAN_ERR_FLAG) {
      error = true;
      extended = false;
      id = rawId & 0x1fffffff;
    } else if (rawId > 0x1fffffff) {
      fail(file, line, `extended id ${hexPad(rawId, 8)} is over 0x1FFFFFFF`);
    }
  } else if (rawId > 0x7ff) {
    fail(file, line, `standard id ${hexPad(rawId, 3)} is over 0x7FF`);
  }

  let fd = false;
  let brs = false;
  let esi = false;
  let remote = false;
  let dlc = -1;
  if (p < end && buf[p] === 35 /* ## : CAN FD */) {
    p++;
    const flags = p < end ? HEX[buf[p]!]! : -1;
    if (flags < 0) fail(file, line, 'CAN FD frame needs a flags hex digit after "##"');
    p++;
    fd = true;
    brs = (flags & 1) !== 0;
    esi = (flags & 2) !== 0;
  } else if (p < end && (buf[p] === 82 || buf[p] === 114) /* R */) {
    p++;
    remote = true;
    dlc = 0;
    if (p < end) {
      const d = HEX[buf[p]!]!;
      if (d >= 0) {
        if (d > 8) fail(file, line, `remote frame DLC ${d} over 8 needs the "_" form`);
        dlc = d;
        p++;
      }
    }
    if (p < end && buf[p] === 95 /* _ */) {
      const d = p + 1 < end ? HEX[buf[p + 1]!]! : -1;
      if (d < 9 || dlc !== 8) fail(file, line, 'a "_" DLC suffix must follow 8 bytes and be 9..F');
      dlc = d;
      p += 2;
    }
  }

  // data
  let data: Uint8Array;
  if (remote) {
    data = new Uint8Array(0);
  } else {
    // count hex digits first (dots allowed between bytes)
    let q = p;
    let nibbles = 0;
    while (q < end) {
      const b = buf[q]!;
      if (HEX[b]! >= 0) nibbles++;
      else if (b !== 46) break;
      q++;
    }
    if (nibbles & 1) fail(file, line, 'data has an odd number of hex digits');
    const len = nibbles >> 1;
    if (!fd && len > 8)
      fail(
        file,
        line,
        `frame ${buf.toString('latin1', idStart, idStart + idDigits)} has ${len} data bytes; a classic CAN frame carries at most 8`,
      );
    if (fd && !FD_LENGTH_OK.has(len)) {
      fail(
        file,
        line,
        `CAN FD frame ${buf.toString('latin1', idStart, idStart + idDigits)} has ${len} data bytes, not a CAN FD length (0-8, 12, 16, 20, 24, 32, 48, 64)`,
      );
    }
    data = new Uint8Array(len);
    let k = 0;
    while (p < q) {
      const hi = HEX[buf[p]!]!;
      if (hi < 0) {
        p++; // a dot
        continue;
      }
      const lo = HEX[buf[p + 1]!]!;
      if (lo < 0) fail(file, line, 'a data byte is split by "."');
      data[k++] = (hi << 4) | lo;
      p += 2;
    }
    dlc = fd ? lengthToDlc(len, true) : len;
    if (!fd && p < end && buf[p] === 95 /* _ */) {
      const d = p + 1 < end ? HEX[buf[p + 1]!]! : -1;
      if (d < 9 || len !== 8) fail(file, line, 'a "_" DLC suffix must follow 8 data bytes and be 9..F');
      dlc = d;
      p += 2;
    }
  }

  let direction: 'rx' | 'tx' | undefined;
  if (p < end) {
    const ws = p;
    while (p < end && (buf[p] === 32 || buf[p] === 9)) p++;
    if (p === ws) fail(file, line, `unexpected "${buf.toString('latin1', p, end)}" after the data`);
    if (p < end) {
      const b = buf[p]!;
      if ((b === 84 || b === 82) && (p + 1 === end || buf[p + 1] === 32 || buf[p + 1] === 9)) {
        direction = b === 84 ? 'tx' : 'rx';
        p++;
        while (p < end && (buf[p] === 32 || buf[p] === 9)) p++;
      }
      if (p < end) fail(file, line, `unexpected "${buf.toString('latin1', p, end)}" after the data`);
    }
  }

  const frame: CanFrame = { timestamp, id, extended, remote, error, fd, brs, esi, dlc, data, channel };
  if (direction !== undefined) frame.direction = direction;
  return frame;
}

/** Formats one frame as a candump log line (without the newline). */
export function formatCandumpLine(frame: CanFrame): string {
  let id: string;
  if (frame.error) id = hexPad(((frame.id & 0x1fffffff) | CAN_ERR_FLAG) >>> 0, 8);
  else if (frame.extended) id = hexPad(frame.id, 8);
  else id = hexPad(frame.id, 3);
  let body: string;
  if (frame.remote) {
    body = '#R' + (frame.dlc > 0 ? Math.min(frame.dlc, 8).toString(16).toUpperCase() : '');
    if (frame.dlc > 8 && !frame.fd) body += '_' + frame.dlc.toString(16).toUpperCase();
  } else {
    let data = '';
    const d = frame.data;
    for (let i = 0; i < d.length; i++) data += hex2(d[i]!);
    if (frame.fd)
      body = '##' + (4 | (frame.brs ? 1 : 0) | (frame.esi ? 2 : 0)).toString(16).toUpperCase() + data;
    else body = '#' + data + (frame.dlc > 8 ? '_' + frame.dlc.toString(16).toUpperCase() : '');
  }
  const dir = frame.direction === undefined ? '' : frame.direction === 'tx' ? ' T' : ' R';
  return `(${frame.timestamp.toFixed(6)}) can${frame.channel} ${id}${body}${dir}`;
}

/** Writes a candump log. Timestamps are written with 6 decimals (1 µs resolution). */
export class CandumpWriter implements CaptureWriter {
  private constructor(private readonly sink: TextSink) {}

  static async open(file: string): Promise<CandumpWriter> {
    return new CandumpWriter(await TextSink.open(file));
  }

  async write(frame: CanFrame): Promise<void> {
    checkFrame(frame);
    if (frame.remote && frame.fd)
      throw new RangeError(`candump cannot record CAN FD remote frame 0x${frame.id.toString(16)}`);
    if (frame.error && frame.data.length > 8)
      throw new RangeError('candump error frames carry at most 8 bytes');
    await this.sink.push(formatCandumpLine(frame) + '\n');
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}

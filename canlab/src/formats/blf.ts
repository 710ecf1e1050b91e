/**
 * Vector BLF (binary logging format), read and write.
 *
 * Layout (all little-endian): a file header (`LOGG`, header size, application and BL versions,
 * file size, uncompressed size, object count, start and stop time as Windows SYSTEMTIME), then
 * objects, each starting with a base header `LOBJ`, header size u16, header version u16, object
 * size u32, object type u32. Top-level objects are LOG_CONTAINERs (type 10): a 16-byte container
 * header (compression method u16: 0 none, 2 zlib; uncompressed size u32) then the payload. The
 * payload of consecutive containers is one stream of inner objects, which may span container
 * boundaries. After a top-level object come `size % 4` padding bytes.
 *
 * Inner object headers: v1 (flags u32, client index u16, object version u16, timestamp u64) or
 * v2 (flags u32, timestamp status u8, pad, object version u16, timestamp u64, original timestamp
 * u64). Timestamp unit: flags 1 → 10 µs, otherwise 1 ns. Frames get absolute timestamps: the
 * file's start SYSTEMTIME (read as UTC, as python-can does; 0 when unset) plus the object's.
 *
 * Read: CAN_MESSAGE (1), CAN_MESSAGE2 (86), CAN_FD_MESSAGE (100), CAN_FD_MESSAGE_64 (101),
 * CAN_ERROR_EXT (73); every other object is skipped. Vector numbers channels from 1 and
 * `CanFrame.channel` counts from 0 (python-can's convention), so the reader subtracts 1 (a stored
 * 0, which Vector never writes, reads as 0 rather than python-can's -1) and the writer adds 1
 * (so channels up to 0xFFFE fit the 16-bit field). A DLC field over 15 (seen
 * in synthetic files) is replaced by the smallest DLC that holds the bytes read, and an id over
 * 0x7FF without the extended bit (31) is read as extended.
 *
 * Write: like python-can's BLFWriter — v1 object headers in nanoseconds, zlib containers of
 * 128 KiB uncompressed (objects split across containers), CAN_MESSAGE for classic frames,
 * CAN_FD_MESSAGE for FD frames, CAN_ERROR_EXT for error frames (which keep channel, id, extended,
 * DLC and up to 8 data bytes but not direction or FD flags). The start time is the first frame's
 * timestamp truncated to the millisecond (when it looks like epoch time, ≥ 1990; otherwise the
 * start is left unset and timestamps are stored as they are). Resolution: 1 ns relative to that
 * start, so about 1 µs after the float round trip for epoch timestamps. A frame earlier than the
 * first one is clamped to the start (BLF timestamps are unsigned).
 */
import { promisify } from 'node:util';
import { deflate, inflateSync } from 'node:zlib';
import type { FileHandle } from 'node:fs/promises';
import { CanlabInputError } from '../errors';
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';
import {
  channelFromFile,
  channelToFile,
  checkFrame,
  flatten,
  openForRead,
  openForWrite,
  type CaptureWriter,
} from './common';

const deflateAsync = promisify(deflate);

export const BLF_FILE_HEADER_SIZE = 144;
const OBJ_BASE_SIZE = 16;
const OBJ_V1_SIZE = 32;
const CONTAINER_HEADER_SIZE = 16;
const LOBJ = 0x4a424f4c; // "LOBJ" read as u32 LE
const LOGG = 0x47474f4c;

export const BLF_LOG_CONTAINER = 10;
export const BLF_CAN_MESSAGE = 1;
export const BLF_CAN_ERROR_EXT = 73;
export const BLF_CAN_MESSAGE2 = 86;
export const BLF_CAN_FD_MESSAGE = 100;
export const BLF_CAN_FD_MESSAGE_64 = 101;

const CAN_MSG_EXT = 0x80000000;
const MAX_CONTAINER = 128 * 1024;
const EPOCH_1990 = 631152000;

/** SYSTEMTIME fields (year, month, weekday, day, hour, minute, second, ms) → epoch seconds (UTC), 0 when unset/invalid. */
export function systemTimeToEpoch(st: readonly number[]): number {
  const [year, month, , day, hour, minute, second, ms] = st as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (
    year < 1601 ||
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > 31 ||
    hour > 23 ||
    minute > 59 ||
    second > 59 ||
    ms > 999
  )
    return 0;
  return Date.UTC(year, month - 1, day, hour, minute, second, ms) / 1000;
}

/** Epoch seconds → SYSTEMTIME fields in UTC (milliseconds truncated); zeros before 1990 (not an epoch time). */
export function epochToSystemTime(epoch: number | undefined): number[] {
  if (epoch === undefined || !(epoch >= EPOCH_1990)) return [0, 0, 0, 0, 0, 0, 0, 0];
  const d = new Date(Math.floor(epoch * 1000));
  return [
    d.getUTCFullYear(),
    d.getUTCMonth() + 1,
    d.getUTCDay(),
    d.getUTCDate(),
    d.getUTCHours(),
    d.getUTCMinutes(),
    d.getUTCSeconds(),
    d.getUTCMilliseconds(),
  ];
}

/** Reads just enough of a file to parse objects sequentially, with its absolute offset known. */
export class FileWindow {
  buf: Buffer = Buffer.allocUnsafe(1 << 20);
  start = 0; // index in buf of the current position
  end = 0; // valid bytes in buf
  offset = 0; // file offset of buf[start]
  private eof = false;
  private filePos = 0;

  constructor(private readonly fh: FileHandle) {}

  /** Makes at least `n` bytes available from the current position; returns how many are (fewer only at EOF). */
  async ensure(n: number): Promise<number> {
    while (this.end - this.start < n && !this.eof) {
      if (this.start > 0) {
        this.buf.copy(this.buf, 0, this.start, this.end);
        this.end -= this.start;
        this.start = 0;
      }
      if (this.buf.length < n) {
        const bigger = Buffer.allocUnsafe(Math.max(n, this.buf.length * 2));
        this.buf.copy(bigger, 0, 0, this.end);
        this.buf = bigger;
      }
      const { bytesRead } = await this.fh.read(this.buf, this.end, this.buf.length - this.end, this.filePos);
      if (bytesRead === 0) this.eof = true;
      this.end += bytesRead;
      this.filePos += bytesRead;
    }
    return Math.min(n, this.end - this.start);
  }

  skip(n: number): void {
    this.start += n;
    this.offset += n;
  }
}

/** Reads a BLF file as batches of frames (one batch per LOG_CONTAINER). */
export async function* readBlfBatches(file: string): AsyncGenerator<CanFrame[]> {
  const fh = await openForRead(file);
  try {
    const w = new FileWindow(fh);
    const have = await w.ensure(BLF_FILE_HEADER_SIZE);
    if (have < 4 || w.buf.readUInt32LE(w.start) !== LOGG) {
      throw new CanlabInputError(
        `${file}@0`,
        `not a BLF file: signature ${JSON.stringify(w.buf.toString('latin1', w.start, w.start + Math.min(have, 4)))}, expected "LOGG"`,
      );
    }
    if (have < 72) throw new CanlabInputError(`${file}@${have}`, 'truncated BLF file header');
    const headerSize = w.buf.readUInt32LE(w.start + 4);
    const st: number[] = [];
    for (let i = 0; i < 8; i++) st.push(w.buf.readUInt16LE(w.start + 40 + i * 2));
    const startEpoch = systemTimeToEpoch(st);
    if ((await w.ensure(headerSize)) < headerSize)
      throw new CanlabInputError(`${file}@${have}`, 'truncated BLF file header');
    w.skip(headerSize);

    const inner = new InnerParser(file, startEpoch);
    for (;;) {
      const got = await w.ensure(OBJ_BASE_SIZE);
      if (got === 0) break;
      const at = w.offset;
      if (got < OBJ_BASE_SIZE) {
        // tolerate a few zero padding bytes at the very end
        if (isZero(w.buf, w.start, w.start + got)) break;
        throw new CanlabInputError(`${file}@${at}`, `truncated object header (${got} of 16 bytes)`);
      }
      if (w.buf.readUInt32LE(w.start) !== LOBJ) {
        // padding before the next object varies between writers: look a few bytes ahead
        let shift = -1;
        for (let k = 1; k <= 7 && k + 4 <= got; k++) {
          if (w.buf.readUInt32LE(w.start + k) === LOBJ && isZero(w.buf, w.start, w.start + k)) {
            shift = k;
            break;
          }
        }
        if (shift < 0) {
          if (isZero(w.buf, w.start, w.start + got) && (await w.ensure(64)) === got) break; // zero tail
          throw new CanlabInputError(
            `${file}@${at}`,
            `bad object signature ${JSON.stringify(w.buf.toString('latin1', w.start, w.start + 4))}, expected "LOBJ"`,
          );
        }
        w.skip(shift);
        continue;
      }
      const objSize = w.buf.readUInt32LE(w.start + 8);
      const objType = w.buf.readUInt32LE(w.start + 12);
      if (objSize < OBJ_BASE_SIZE)
        throw new CanlabInputError(`${file}@${at}`, `object size ${objSize} is smaller than its header`);
      const avail = await w.ensure(objSize);
      if (avail < objSize) {
        throw new CanlabInputError(
          `${file}@${at}`,
          `truncated ${objType === BLF_LOG_CONTAINER ? 'LOG_CONTAINER' : `object (type ${objType})`}: ${objSize} bytes declared, ${avail} present`,
        );
      }
      if (objType === BLF_LOG_CONTAINER) {
        const hs = w.buf.readUInt16LE(w.start + 4);
        const body = w.start + Math.max(hs, OBJ_BASE_SIZE);
        if (objSize < Math.max(hs, OBJ_BASE_SIZE) + CONTAINER_HEADER_SIZE)
          throw new CanlabInputError(`${file}@${at}`, 'LOG_CONTAINER too small for its header');
        const method = w.buf.readUInt16LE(body);
        const uncompressed = w.buf.readUInt32LE(body + 8);
        const payload = w.buf.subarray(body + CONTAINER_HEADER_SIZE, w.start + objSize);
        let data: Buffer;
        if (method === 0) {
          data = Buffer.from(payload);
        } else if (method === 2) {
          try {
            data = inflateSync(payload);
          } catch (err) {
            throw new CanlabInputError(
              `${file}@${at}`,
              `LOG_CONTAINER zlib data is corrupt (${(err as Error).message})`,
            );
          }
          if (uncompressed !== 0 && data.length !== uncompressed) {
            throw new CanlabInputError(
              `${file}@${at}`,
              `LOG_CONTAINER inflated to ${data.length} bytes, header says ${uncompressed}`,
            );
          }
        } else {
          throw new CanlabInputError(
            `${file}@${at}`,
            `LOG_CONTAINER uses unknown compression method ${method}`,
          );
        }
        const frames = inner.feed(data, at);
        if (frames.length > 0) yield frames;
      }
      w.skip(objSize);
      // python-can and Vector pad top-level objects with size % 4 bytes
      const pad = objSize % 4;
      if (pad > 0) {
        const p = await w.ensure(pad);
        if (isZero(w.buf, w.start, w.start + p)) w.skip(p);
      }
    }
    inner.finish();
  } finally {
    await fh.close();
  }
}

function isZero(buf: Buffer, from: number, to: number): boolean {
  for (let i = from; i < to; i++) if (buf[i] !== 0) return false;
  return true;
}

/** Parses the inner object stream, carrying a partial object over to the next container. */
class InnerParser {
  private tail: Buffer = Buffer.alloc(0);
  private tailOffset = 0;

  constructor(
    private readonly file: string,
    private readonly startEpoch: number,
  ) {}

  feed(chunk: Buffer, containerOffset: number): CanFrame[] {
    const data = this.tail.length > 0 ? Buffer.concat([this.tail, chunk]) : chunk;
    if (this.tail.length === 0) this.tailOffset = containerOffset;
    const out: CanFrame[] = [];
    const len = data.length;
    let pos = 0;
    while (pos + OBJ_BASE_SIZE <= len) {
      if (data.readUInt32LE(pos) !== LOBJ) {
        // inner objects may be padded to 4 bytes (or 8, depending on the writer)
        let k = 1;
        while (k <= 7 && pos + k + 4 <= len && data.readUInt32LE(pos + k) !== LOBJ) k++;
        if (k <= 7 && pos + k + 4 <= len) {
          pos += k;
          continue;
        }
        if (pos + 8 > len) break; // padding at the end of this container
        throw new CanlabInputError(
          `${this.file}@${this.tailOffset}`,
          `bad inner object signature in the LOG_CONTAINER at offset ${containerOffset} (position ${pos} of its data)`,
        );
      }
      const headerSize = data.readUInt16LE(pos + 4);
      const headerVersion = data.readUInt16LE(pos + 6);
      const objSize = data.readUInt32LE(pos + 8);
      const objType = data.readUInt32LE(pos + 12);
      if (objSize < OBJ_BASE_SIZE)
        throw new CanlabInputError(
          `${this.file}@${containerOffset}`,
          `inner object size ${objSize} is smaller than its header`,
        );
      if (pos + objSize > len) break; // continues in the next container
      if ((headerVersion === 1 || headerVersion === 2) && isFrameType(objType)) {
        const flags = data.readUInt32LE(pos + 16);
        const tsLo = data.readUInt32LE(pos + 24);
        const tsHi = data.readUInt32LE(pos + 28);
        const raw = tsHi * 4294967296 + tsLo;
        const timestamp = this.startEpoch + (flags === 1 ? raw * 1e-5 : raw * 1e-9);
        const p = pos + (headerSize >= OBJ_V1_SIZE ? headerSize : headerVersion === 2 ? 40 : OBJ_V1_SIZE);
        const frame = decodeObject(data, pos, p, pos + objSize, objType, timestamp);
        if (frame === null)
          throw new CanlabInputError(
            `${this.file}@${containerOffset}`,
            `inner object of type ${objType} is too short (${objSize} bytes)`,
          );
        out.push(frame);
      }
      pos += objSize;
    }
    this.tail = pos < len ? Buffer.from(data.subarray(pos)) : Buffer.alloc(0);
    if (pos > 0 || this.tail.length === 0) this.tailOffset = containerOffset;
    return out;
  }

  /** At end of file, a leftover partial object means the file was cut short. */
  finish(): void {
    const t = this.tail;
    if (t.length >= 4 && t.readUInt32LE(0) === LOBJ) {
      const size = t.length >= 12 ? t.readUInt32LE(8) : 0;
      throw new CanlabInputError(
        `${this.file}@${this.tailOffset}`,
        `file ends inside an object (${t.length} of ${size} bytes present)`,
      );
    }
  }
}

/** Bit 31 marks an extended id; an id over 0x7FF without it (synthetic files) is extended too. */
function isExtended(rawId: number): boolean {
  return (rawId & CAN_MSG_EXT) !== 0 || (rawId & 0x1fffffff) > 0x7ff;
}

function isFrameType(t: number): boolean {
  return (
    t === BLF_CAN_MESSAGE ||
    t === BLF_CAN_MESSAGE2 ||
    t === BLF_CAN_FD_MESSAGE ||
    t === BLF_CAN_FD_MESSAGE_64 ||
    t === BLF_CAN_ERROR_EXT
  );
}

/** Copies `length` bytes from `from` (bounded by `limit`), zero-padding what the object lacks. */
function copyData(data: Buffer, from: number, limit: number, length: number): Uint8Array {
  const out = new Uint8Array(length);
  const n = Math.max(0, Math.min(length, limit - from));
  if (n > 0) out.set(data.subarray(from, from + n));
  return out;
}

function decodeObject(
  data: Buffer,
  objStart: number,
  p: number,
  end: number,
  type: number,
  timestamp: number,
): CanFrame | null {
  switch (type) {
    case BLF_CAN_MESSAGE:
    case BLF_CAN_MESSAGE2: {
      if (p + 16 > end) return null;
      const channel = channelFromFile(data.readUInt16LE(p));
      const flags = data[p + 2]!;
      const rawDlc = data[p + 3]!;
      const rawId = data.readUInt32LE(p + 4);
      const remote = (flags & 0x80) !== 0;
      const dlc = rawDlc <= 15 ? rawDlc : 8;
      const length = remote ? 0 : dlcToLength(dlc, false);
      return {
        timestamp,
        id: rawId & 0x1fffffff,
        extended: isExtended(rawId),
        remote,
        error: false,
        fd: false,
        brs: false,
        esi: false,
        dlc,
        data: copyData(data, p + 8, end, length),
        channel,
        direction: flags & 1 ? 'tx' : 'rx',
      };
    }
    case BLF_CAN_FD_MESSAGE: {
      if (p + 20 > end) return null;
      const channel = channelFromFile(data.readUInt16LE(p));
      const flags = data[p + 2]!;
      const rawDlc = data[p + 3]!;
      const rawId = data.readUInt32LE(p + 4);
      const fdFlags = data[p + 13]!;
      const valid = data[p + 14]!;
      const fd = (fdFlags & 1) !== 0;
      const remote = (flags & 0x80) !== 0;
      const dlc = rawDlc <= 15 ? rawDlc : lengthToDlc(Math.min(valid, fd ? 64 : 8), fd);
      const length = remote ? 0 : dlcToLength(dlc, fd);
      return {
        timestamp,
        id: rawId & 0x1fffffff,
        extended: isExtended(rawId),
        remote,
        error: false,
        fd,
        brs: fd && (fdFlags & 2) !== 0,
        esi: fd && (fdFlags & 4) !== 0,
        dlc,
        data: copyData(data, p + 20, Math.min(end, p + 20 + 64), length),
        channel,
        direction: flags & 1 ? 'tx' : 'rx',
      };
    }
    case BLF_CAN_FD_MESSAGE_64: {
      if (p + 40 > end) return null;
      const channel = channelFromFile(data[p]!);
      const rawDlc = data[p + 1]!;
      const valid = data[p + 2]!;
      const rawId = data.readUInt32LE(p + 4);
      const flags = data.readUInt32LE(p + 12);
      const dir = data[p + 34]!;
      const extDataOffset = data[p + 35]!;
      const fd = (flags & 0x1000) !== 0;
      const remote = (flags & 0x10) !== 0;
      const dlc = rawDlc <= 15 ? rawDlc : lengthToDlc(Math.min(valid, fd ? 64 : 8), fd);
      const length = remote ? 0 : dlcToLength(dlc, fd);
      // python-can issue 1905: valid bytes can exceed the data present; the rest reads as zeros.
      // The data ends at the extended-data offset (from the object start) when one is given.
      const dataEnd = extDataOffset > 0 ? Math.min(end, objStart + extDataOffset) : end;
      return {
        timestamp,
        id: rawId & 0x1fffffff,
        extended: isExtended(rawId),
        remote,
        error: false,
        fd,
        brs: fd && (flags & 0x2000) !== 0,
        esi: fd && (flags & 0x4000) !== 0,
        dlc,
        data: copyData(data, p + 40, Math.min(dataEnd, p + 40 + Math.min(valid, 64)), length),
        channel,
        direction: dir === 0 ? 'rx' : 'tx',
      };
    }
    case BLF_CAN_ERROR_EXT: {
      if (p + 32 > end) return null;
      const channel = channelFromFile(data.readUInt16LE(p));
      const rawDlc = data[p + 10]!;
      const rawId = data.readUInt32LE(p + 16);
      const dlc = rawDlc <= 15 ? rawDlc : 8;
      return {
        timestamp,
        id: rawId & 0x1fffffff,
        extended: isExtended(rawId),
        remote: false,
        error: true,
        fd: false,
        brs: false,
        esi: false,
        dlc,
        data: copyData(data, p + 24, end, dlcToLength(dlc, false)),
        channel,
      };
    }
    default:
      return null;
  }
}

/** Reads a BLF file frame by frame. */
export function readBlf(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readBlfBatches(file));
}

/** Writes BLF with zlib-compressed LOG_CONTAINERs (see the module comment for what is kept). */
export class BlfWriter implements CaptureWriter {
  private container = Buffer.alloc(MAX_CONTAINER);
  private used = 0;
  private filePos = BLF_FILE_HEADER_SIZE;
  private uncompressedSize = BLF_FILE_HEADER_SIZE;
  private objectCount = 0;
  private startEpoch: number | undefined;
  private base = 0;
  private lastEpoch: number | undefined;
  private obj = Buffer.alloc(OBJ_V1_SIZE + 84);
  private closed = false;

  private constructor(
    private readonly fh: FileHandle,
    private readonly compressionLevel: number,
  ) {}

  static async open(file: string, compressionLevel = 6): Promise<BlfWriter> {
    const fh = await openForWrite(file);
    const w = new BlfWriter(fh, compressionLevel);
    await fh.write(w.header(BLF_FILE_HEADER_SIZE), 0, BLF_FILE_HEADER_SIZE, 0);
    return w;
  }

  private header(fileSize: number): Buffer {
    const h = Buffer.alloc(BLF_FILE_HEADER_SIZE);
    h.writeUInt32LE(LOGG, 0);
    h.writeUInt32LE(BLF_FILE_HEADER_SIZE, 4);
    // application id 0 (unknown) and version 0.0.0; binary log format version 2.6.8.1
    h[12] = 2;
    h[13] = 6;
    h[14] = 8;
    h[15] = 1;
    h.writeBigUInt64LE(BigInt(fileSize), 16);
    h.writeBigUInt64LE(BigInt(this.uncompressedSize), 24);
    h.writeUInt32LE(this.objectCount, 32);
    const start = epochToSystemTime(this.startEpoch);
    const stop = epochToSystemTime(this.startEpoch === undefined ? undefined : this.lastEpoch);
    for (let i = 0; i < 8; i++) {
      h.writeUInt16LE(start[i]!, 40 + i * 2);
      h.writeUInt16LE(stop[i]!, 56 + i * 2);
    }
    return h;
  }

  async write(frame: CanFrame): Promise<void> {
    if (this.closed) throw new Error('BLF writer is closed');
    checkFrame(frame);
    if (this.startEpoch === undefined && this.objectCount === 0) {
      if (frame.timestamp >= EPOCH_1990) {
        this.startEpoch = Math.floor(frame.timestamp * 1000) / 1000;
        this.base = this.startEpoch;
      } else {
        this.base = 0;
      }
    }
    if (this.startEpoch !== undefined) this.lastEpoch = frame.timestamp;
    const o = this.obj;
    o.fill(0);
    let type: number;
    let payload: number;
    const rawId = (frame.id | (frame.extended ? CAN_MSG_EXT : 0)) >>> 0;
    const tx = frame.direction === 'tx' ? 1 : 0;
    const channel = channelToFile(frame.channel);
    if (channel > 0xffff)
      throw new RangeError(
        `channel ${frame.channel} does not fit BLF's 16-bit channel field (0-based channels go up to 0xFFFE)`,
      );
    if (frame.error) {
      if (frame.data.length > 8) throw new RangeError('BLF error frames carry at most 8 data bytes');
      type = BLF_CAN_ERROR_EXT;
      payload = 32;
      o.writeUInt16LE(channel, 32);
      o[32 + 10] = frame.dlc;
      o.writeUInt32LE(rawId, 32 + 16);
      o.set(frame.data, 32 + 24);
    } else if (frame.fd) {
      type = BLF_CAN_FD_MESSAGE;
      payload = 84;
      o.writeUInt16LE(channel, 32);
      o[32 + 2] = tx | (frame.remote ? 0x80 : 0);
      o[32 + 3] = frame.dlc;
      o.writeUInt32LE(rawId, 32 + 4);
      o[32 + 13] = 1 | (frame.brs ? 2 : 0) | (frame.esi ? 4 : 0);
      o[32 + 14] = frame.remote ? 0 : frame.data.length;
      o.set(frame.data, 32 + 20);
    } else {
      type = BLF_CAN_MESSAGE;
      payload = 16;
      o.writeUInt16LE(channel, 32);
      o[32 + 2] = tx | (frame.remote ? 0x80 : 0);
      o[32 + 3] = frame.dlc;
      o.writeUInt32LE(rawId, 32 + 4);
      o.set(frame.data, 32 + 8);
    }
    const size = OBJ_V1_SIZE + payload;
    o.writeUInt32LE(LOBJ, 0);
    o.writeUInt16LE(OBJ_V1_SIZE, 4);
    o.writeUInt16LE(1, 6);
    o.writeUInt32LE(size, 8);
    o.writeUInt32LE(type, 12);
    o.writeUInt32LE(2, 16); // timestamps in nanoseconds
    const ns = Math.max(0, Math.round((frame.timestamp - this.base) * 1e9));
    o.writeUInt32LE(ns % 4294967296, 24);
    o.writeUInt32LE(Math.floor(ns / 4294967296), 28);
    this.objectCount++;
    // copy into the container, splitting across containers like python-can does
    let from = 0;
    while (from < size) {
      const n = Math.min(size - from, MAX_CONTAINER - this.used);
      o.copy(this.container, this.used, from, from + n);
      this.used += n;
      from += n;
      if (this.used === MAX_CONTAINER) await this.flush();
    }
  }

  private async flush(): Promise<void> {
    if (this.used === 0) return;
    const raw = this.container.subarray(0, this.used);
    const compressed = await deflateAsync(raw, { level: this.compressionLevel });
    const objSize = OBJ_BASE_SIZE + CONTAINER_HEADER_SIZE + compressed.length;
    const head = Buffer.alloc(OBJ_BASE_SIZE + CONTAINER_HEADER_SIZE);
    head.writeUInt32LE(LOBJ, 0);
    head.writeUInt16LE(OBJ_BASE_SIZE, 4);
    head.writeUInt16LE(1, 6);
    head.writeUInt32LE(objSize, 8);
    head.writeUInt32LE(BLF_LOG_CONTAINER, 12);
    head.writeUInt16LE(2, 16); // zlib
    head.writeUInt32LE(this.used, 24);
    const pad = Buffer.alloc(objSize % 4);
    const all = Buffer.concat([head, compressed, pad]);
    await this.fh.write(all, 0, all.length, this.filePos);
    this.filePos += all.length;
    this.uncompressedSize += OBJ_BASE_SIZE + CONTAINER_HEADER_SIZE + this.used;
    this.used = 0;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.flush();
      await this.fh.write(this.header(this.filePos), 0, BLF_FILE_HEADER_SIZE, 0);
    } finally {
      await this.fh.close();
    }
  }
}

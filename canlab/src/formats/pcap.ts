/**
 * Wireshark / tcpdump captures of SocketCAN traffic, read only: pcap and pcapng files whose link type
 * is LINKTYPE_CAN_SOCKETCAN (227). The layouts follow the published descriptions: the pcap and pcapng
 * drafts of the IETF OPSAWG (draft-ietf-opsawg-pcap, draft-ietf-opsawg-pcapng) and tcpdump.org's
 * "Link-layer header types" page for LINKTYPE_CAN_SOCKETCAN; frame kinds are told apart as Wireshark's
 * SocketCAN dissector (epan/dissectors/packet-socketcan.c) does.
 *
 * pcap: a 24-byte file header (magic A1B2C3D4 for microsecond, A1B23C4D for nanosecond timestamps,
 * written in either byte order, which then holds for every field), then per packet a 16-byte record
 * header (seconds, fraction, captured length, original length) and the captured bytes.
 *
 * pcapng: blocks of (type, total length, body, total length). A Section Header Block (0x0A0D0D0A)
 * sets the byte order of its section (magic 1A2B3C4D); Interface Description Blocks (1) give each
 * interface its link type and timestamp unit (`if_tsresol`, default microseconds; `if_tsoffset`
 * seconds added); Enhanced Packet Blocks (6) carry an interface id, a 64-bit timestamp and the packet,
 * with an `epb_flags` option whose low two bits say inbound (Rx) or outbound (Tx); Simple Packet
 * Blocks (3) carry only a packet, for interface 0, with no timestamp (read as 0). Other blocks are
 * skipped, as the draft asks, except the obsolete Packet Block (2), which is refused. Interfaces are
 * numbered in file order (continuing across sections), as Wireshark's `frame.interface_id` numbers
 * them within a section, and that number is the frame's channel; packets of interfaces with another
 * link type (an Ethernet interface captured alongside) are skipped, and a file with no SocketCAN
 * interface at all is refused naming its link types. A pcap file has one interface: channel 0.
 *
 * The SocketCAN header (8 bytes, then the data): CAN id and flags as a big-endian u32 (bit 31 EFF:
 * 29-bit id, bit 30 RTR: remote frame, bit 29 ERR: error frame whose id bits are the error class),
 * payload length, CAN FD flags (BRS 0x01, ESI 0x02, FDF 0x04), a reserved byte and, for classic
 * frames, len8_dlc (the DLC 9..15 of an 8-byte frame). A frame is CAN FD when FDF is set and the FD
 * flags and both following bytes hold nothing else (Wireshark's test: old captures left junk there),
 * or when its length exceeds 8. Error and remote flags mean something only on classic frames. Error
 * frames keep the error class (id & 0x1FFFFFFF) as `id` and their 8 data bytes, like candump's.
 */
import { CanlabInputError } from '../errors';
import { lengthToDlc, type CanFrame } from '../frame';
import { FileWindow } from './blf';
import { BATCH_FRAMES, flatten, openForRead } from './common';

const LINKTYPE_CAN_SOCKETCAN = 227;

const CAN_EFF_FLAG = 0x80000000;
const CAN_RTR_FLAG = 0x40000000;
const CAN_ERR_FLAG = 0x20000000;
const CANFD_BRS = 0x01;
const CANFD_ESI = 0x02;
const CANFD_FDF = 0x04;
const FD_LENGTHS = new Set([0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 20, 24, 32, 48, 64]);

const PCAPNG_SHB = 0x0a0d0d0a;
const PCAPNG_BYTE_ORDER = 0x1a2b3c4d;
const PCAPNG_IDB = 1;
const PCAPNG_OBSOLETE_PB = 2;
const PCAPNG_SPB = 3;
const PCAPNG_EPB = 6;

/** The link types a SocketCAN reader most often meets instead, named as tcpdump.org names them. */
const LINKTYPE_NAMES: Record<number, string> = {
  1: 'LINKTYPE_ETHERNET',
  101: 'LINKTYPE_RAW',
  113: 'LINKTYPE_LINUX_SLL',
  190: 'LINKTYPE_CAN20B',
  227: 'LINKTYPE_CAN_SOCKETCAN',
  276: 'LINKTYPE_LINUX_SLL2',
};

function linkTypeName(linkType: number): string {
  const name = LINKTYPE_NAMES[linkType];
  return name === undefined ? `link type ${linkType}` : `link type ${linkType} (${name})`;
}

/** The 4-byte magic numbers a pcap file starts with, as read big-endian: µs or ns, either byte order. */
const PCAP_MAGICS = new Map<number, { littleEndian: boolean; nano: boolean }>([
  [0xa1b2c3d4, { littleEndian: false, nano: false }],
  [0xd4c3b2a1, { littleEndian: true, nano: false }],
  [0xa1b23c4d, { littleEndian: false, nano: true }],
  [0x4d3cb2a1, { littleEndian: true, nano: true }],
]);

/** A pcap file: its magic number, in either byte order, for micro- or nanosecond timestamps. */
export function sniffPcap(head: Buffer): boolean {
  return head.length >= 24 && PCAP_MAGICS.has(head.readUInt32BE(0));
}

/** A pcapng file: a Section Header Block with its byte-order magic, in either byte order. */
export function sniffPcapng(head: Buffer): boolean {
  if (head.length < 12 || head.readUInt32BE(0) !== PCAPNG_SHB) return false;
  return head.readUInt32LE(8) === PCAPNG_BYTE_ORDER || head.readUInt32BE(8) === PCAPNG_BYTE_ORDER;
}

/** A capture being read: its window, its name (for errors) and its size. */
interface Source {
  w: FileWindow;
  file: string;
  size: number;
}

/**
 * Makes the next `n` bytes readable at `w.buf[w.start]` (returned), failing with `what` located at
 * their file offset if the file ends first; checked against the file's size first, so that a corrupt
 * length does not make the window try to hold gigabytes.
 */
async function need(src: Source, n: number, what: string): Promise<number> {
  const { w } = src;
  const have = Math.min(n, src.size - w.offset);
  if (have < n || (await w.ensure(n)) < n)
    throw new CanlabInputError(
      `${src.file}@${w.offset}`,
      `truncated: the ${what} needs ${n} bytes, the file ends after ${have}`,
    );
  return w.start;
}

/** Where the timestamp of a packet comes from: ticks per second and the seconds added to it. */
interface Clock {
  units: number;
  offset: number;
}

/** ticks / units + offset, exact to the double when ticks (high << 32 | low) exceeds 2^53. */
function ticksToSeconds(high: number, low: number, clock: Clock): number {
  const ticks = high * 4294967296 + low;
  if (ticks <= Number.MAX_SAFE_INTEGER) {
    const whole = Math.floor(ticks / clock.units);
    return whole + (ticks - whole * clock.units) / clock.units + clock.offset;
  }
  const big = (BigInt(high) << 32n) | BigInt(low);
  const units = BigInt(clock.units);
  const whole = big / units;
  return Number(whole) + Number(big - whole * units) / clock.units + clock.offset;
}

/**
 * One SocketCAN packet (`len` captured bytes at `buf[at]`) as a frame, or an error message for a
 * packet that cannot be one.
 */
function socketcanFrame(
  buf: Buffer,
  at: number,
  len: number,
  timestamp: number,
  channel: number,
): CanFrame | string {
  if (len < 8) return `packet of ${len} bytes is shorter than the 8-byte SocketCAN header`;
  const canId = buf.readUInt32BE(at);
  const length = buf[at + 4]!;
  const fdFlags = buf[at + 5]!;
  const reserved = buf[at + 6]!;
  const len8Dlc = buf[at + 7]!;
  const fdf =
    (fdFlags & CANFD_FDF) !== 0 &&
    (fdFlags & ~(CANFD_BRS | CANFD_ESI | CANFD_FDF)) === 0 &&
    reserved === 0 &&
    len8Dlc === 0;
  const fd = fdf || length > 8;
  const error = !fd && (canId & CAN_ERR_FLAG) !== 0;
  const extended = !error && (canId & CAN_EFF_FLAG) !== 0;
  const remote = !fd && !error && (canId & CAN_RTR_FLAG) !== 0;
  const id = error || extended ? canId & 0x1fffffff : canId & 0x7ff;
  if (fd && !FD_LENGTHS.has(length))
    return `CAN FD length ${length} is not one a CAN FD frame can have (0-8, 12, 16, 20, 24, 32, 48, 64)`;
  const frame: CanFrame = {
    timestamp,
    id,
    extended,
    remote,
    error,
    fd,
    brs: fd && (fdFlags & CANFD_BRS) !== 0,
    esi: fd && (fdFlags & CANFD_ESI) !== 0,
    dlc: fd ? lengthToDlc(length, true) : length === 8 && len8Dlc > 8 && len8Dlc <= 15 ? len8Dlc : length,
    data: new Uint8Array(0),
    channel,
  };
  if (remote) return frame;
  if (len < 8 + length)
    return `packet holds ${len - 8} data bytes, its SocketCAN header says ${length} (captured with too short a snapshot length?)`;
  frame.data = new Uint8Array(length);
  frame.data.set(buf.subarray(at + 8, at + 8 + length));
  return frame;
}

/** Reads a pcap or pcapng SocketCAN capture as batches of frames. */
export async function* readPcapBatches(file: string): AsyncGenerator<CanFrame[]> {
  const fh = await openForRead(file);
  try {
    const src: Source = { w: new FileWindow(fh), file, size: (await fh.stat()).size };
    const at = await need(src, 4, 'file header');
    if (src.w.buf.readUInt32BE(at) === PCAPNG_SHB) yield* pcapngBatches(src);
    else yield* pcapBatches(src);
  } finally {
    await fh.close();
  }
}

/** Reads a pcap or pcapng SocketCAN capture frame by frame. */
export function readPcap(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readPcapBatches(file));
}

async function* pcapBatches(src: Source): AsyncGenerator<CanFrame[]> {
  const { w, file } = src;
  let at = await need(src, 24, 'pcap file header');
  const kind = PCAP_MAGICS.get(w.buf.readUInt32BE(at));
  if (kind === undefined)
    throw new CanlabInputError(
      `${file}@0`,
      `not a pcap or pcapng file: it starts with 0x${w.buf.readUInt32BE(at).toString(16).padStart(8, '0')}`,
    );
  const le = kind.littleEndian;
  const u32 = (p: number): number => (le ? w.buf.readUInt32LE(p) : w.buf.readUInt32BE(p));
  const linkType = u32(at + 20) & 0xffff;
  if (linkType !== LINKTYPE_CAN_SOCKETCAN)
    throw new CanlabInputError(
      `${file}@20`,
      `${linkTypeName(linkType)}: canlab reads SocketCAN captures, ${linkTypeName(LINKTYPE_CAN_SOCKETCAN)}`,
    );
  w.skip(24);
  const fraction = kind.nano ? 1e9 : 1e6;
  let out: CanFrame[] = [];
  for (;;) {
    // awaiting the window only when the record is not in it already: a promise per frame would cost
    // more than parsing it
    at = w.start;
    let captured = w.end - at >= 16 ? u32(at + 8) : -1;
    if (captured < 0 || w.end - at < 16 + captured) {
      if ((await w.ensure(1)) === 0) break;
      at = await need(src, 16, 'packet record header');
      captured = u32(at + 8);
      at = await need(src, 16 + captured, 'packet record');
    }
    const offset = w.offset;
    const frame = socketcanFrame(w.buf, at + 16, captured, u32(at) + u32(at + 4) / fraction, 0);
    if (typeof frame === 'string') throw new CanlabInputError(`${file}@${offset}`, frame);
    w.skip(16 + captured);
    out.push(frame);
    if (out.length === BATCH_FRAMES) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
}

/** An interface of a pcapng file: its channel (file-wide number), link type, clock and snapshot length. */
interface Interface {
  channel: number;
  linkType: number;
  clock: Clock;
  snapLen: number;
}

/** Reads a pcapng block's options (code, length, value padded to 4 bytes) from `from` to `to`. */
function* options(
  buf: Buffer,
  from: number,
  to: number,
  u16: (p: number) => number,
): Generator<{ code: number; at: number; len: number }> {
  let p = from;
  while (p + 4 <= to) {
    const code = u16(p);
    const len = u16(p + 2);
    if (code === 0 || p + 4 + len > to) return;
    yield { code, at: p + 4, len };
    p += 4 + len + ((4 - (len % 4)) % 4);
  }
}

async function* pcapngBatches(src: Source): AsyncGenerator<CanFrame[]> {
  const { w, file } = src;
  let le = true;
  const u32 = (p: number): number => (le ? w.buf.readUInt32LE(p) : w.buf.readUInt32BE(p));
  const u16 = (p: number): number => (le ? w.buf.readUInt16LE(p) : w.buf.readUInt16BE(p));
  const interfaces: Interface[] = [];
  let section: Interface[] = [];
  const otherLinkTypes = new Set<number>();
  let out: CanFrame[] = [];
  for (;;) {
    let at = w.start;
    if (w.end - at < 12 || w.end - at < u32(at + 4)) {
      if ((await w.ensure(1)) === 0) break;
      at = await need(src, 12, 'block header');
    }
    const offset = w.offset;
    const fail = (message: string): CanlabInputError => new CanlabInputError(`${file}@${offset}`, message);
    const type = w.buf.readUInt32BE(at) === PCAPNG_SHB ? PCAPNG_SHB : u32(at);
    if (type === PCAPNG_SHB) {
      const magic = w.buf.readUInt32LE(at + 8);
      if (magic !== PCAPNG_BYTE_ORDER && w.buf.readUInt32BE(at + 8) !== PCAPNG_BYTE_ORDER)
        throw fail('section header block without the byte-order magic 1A2B3C4D');
      le = magic === PCAPNG_BYTE_ORDER;
      section = [];
    } else if (offset === 0) {
      throw fail('a pcapng file starts with a section header block');
    }
    const total = u32(at + 4);
    if (total < 12 || total % 4 !== 0)
      throw fail(`block length ${total} is not a multiple of 4 of at least 12`);
    if (w.end - at < total) at = await need(src, total, 'block');
    if (u32(at + total - 4) !== total) throw fail(`block length ${total} is not repeated at the block's end`);
    const body = at + 8;
    const end = at + total - 4;
    if (type === PCAPNG_IDB) {
      if (total < 20) throw fail('interface description block shorter than 20 bytes');
      const iface: Interface = {
        channel: interfaces.length,
        linkType: u16(body),
        clock: { units: 1e6, offset: 0 },
        snapLen: u32(body + 4),
      };
      for (const o of options(w.buf, body + 8, end, u16)) {
        if (o.code === 9 && o.len >= 1) {
          const resol = w.buf[o.at]!;
          const exponent = resol & 0x7f;
          if ((resol & 0x80) === 0 ? exponent > 15 : exponent > 52)
            throw fail(`if_tsresol ${resol} is finer than canlab can hold`);
          iface.clock.units = (resol & 0x80) === 0 ? 10 ** exponent : 2 ** exponent;
        } else if (o.code === 14 && o.len >= 8) {
          iface.clock.offset = Number(le ? w.buf.readBigInt64LE(o.at) : w.buf.readBigInt64BE(o.at));
        }
      }
      interfaces.push(iface);
      section.push(iface);
      if (iface.linkType !== LINKTYPE_CAN_SOCKETCAN) otherLinkTypes.add(iface.linkType);
    } else if (type === PCAPNG_EPB || type === PCAPNG_SPB) {
      const epb = type === PCAPNG_EPB;
      const headerLen = epb ? 20 : 4;
      if (total < 12 + headerLen) throw fail(`packet block shorter than ${12 + headerLen} bytes`);
      const ifaceId = epb ? u32(body) : 0;
      const iface = section[ifaceId];
      if (iface === undefined)
        throw fail(`packet of interface ${ifaceId}, which the section has not described`);
      const data = body + headerLen;
      const captured = epb ? u32(body + 12) : Math.min(u32(body), end - data, iface.snapLen || Infinity);
      if (data + captured > end) throw fail(`packet of ${captured} bytes overruns its block`);
      if (iface.linkType === LINKTYPE_CAN_SOCKETCAN) {
        const timestamp = epb ? ticksToSeconds(u32(body + 4), u32(body + 8), iface.clock) : 0;
        const frame = socketcanFrame(w.buf, data, captured, timestamp, iface.channel);
        if (typeof frame === 'string') throw fail(frame);
        if (epb) {
          for (const o of options(w.buf, data + captured + ((4 - (captured % 4)) % 4), end, u16)) {
            if (o.code !== 2 || o.len < 4) continue;
            const direction = u32(o.at) & 3;
            if (direction !== 0) frame.direction = direction === 1 ? 'rx' : 'tx';
          }
        }
        out.push(frame);
      }
    } else if (type === PCAPNG_OBSOLETE_PB) {
      throw fail('obsolete Packet Block (type 2): canlab reads Enhanced and Simple Packet Blocks');
    }
    w.skip(total);
    if (out.length >= BATCH_FRAMES) {
      yield out;
      out = [];
    }
  }
  if (out.length > 0) yield out;
  if (interfaces.length > 0 && interfaces.every((i) => i.linkType !== LINKTYPE_CAN_SOCKETCAN))
    throw new CanlabInputError(
      `${file}@0`,
      `no SocketCAN interface, only ${[...otherLinkTypes].map(linkTypeName).join(', ')}: canlab reads ${linkTypeName(LINKTYPE_CAN_SOCKETCAN)}`,
    );
}

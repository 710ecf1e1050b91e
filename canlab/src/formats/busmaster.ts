/**
 * BUSMASTER logs (`.log`), read only: the CAN log of the BUSMASTER bus analyser (rbei-etas/busmaster).
 * The layout follows BUSMASTER's own writer (Sources/FrameProcessor: LogObjectCAN.cpp for the header
 * and the line, Format/FormatMsgCAN.cpp and FormatMsgCommon.cpp for the fields) and Wireshark's
 * reader of the same files (wiretap/busmaster*.{c,l,lemon}), which is the reference the tests compare
 * with; SavvyCAN's `loadLogFile` reads the same lines.
 *
 *     ***BUSMASTER Ver 3.2.2***
 *     ***PROTOCOL CAN***
 *     ***[START LOGGING SESSION]***
 *     ***START DATE AND TIME 8:8:2014 11:49:7:965***          day:month:year hour:min:sec:ms
 *     ***HEX***                                                or ***DEC***
 *     ***SYSTEM MODE***                                        or ***ABSOLUTE MODE***, ***RELATIVE MODE***
 *     ***<Time><Tx/Rx><Channel><CAN ID><Type><DLC><DataBytes>***
 *     11:49:12:9440 Rx 1 0x460 s 8 03 E0 00 00 C0 00 00 00
 *     11:49:12:9530 Tx 2 0x18FF00AA x 2 01 02
 *     11:49:12:9531 Rx 1 0x7DF sr 8
 *     11:49:12:9690 Rx 2 0x123 s-fd 12 00 11 22 33 44 55 66 77 88 99 AA BB
 *     ***END DATE AND TIME 8:8:2014 11:49:13:120***
 *     ***[STOP LOGGING SESSION]***
 *
 * Lines between `***` are the header and footer; a file may hold several sessions, each with its own
 * header. Frame lines: time, Rx/Tx, channel (BUSMASTER counts from 1: channel N is `CanFrame.channel`
 * N - 1, as for ASC and BLF), id (hex with 0x in HEX logs, decimal in DEC logs), type (s, x: 11- and
 * 29-bit data frames; sr, xr: remote frames, with or without data bytes written; s-fd, x-fd: CAN FD,
 * BRS/ESI not recorded; ERR…: an error, read as an error frame with id 0 and no data, the rest of the
 * line being text), the DLC in decimal (for CAN FD the byte count), and the data bytes (hex, or
 * decimal in DEC logs).
 *
 * Times are h:m:s:tttt, tttt being tenths of milliseconds (BUSMASTER writes `%02d:%02d:%02d:%04d`);
 * a fraction of 3 digits, which SavvyCAN's writer puts there, is read as milliseconds. What the time
 * means depends on the session's mode, and the header's start date and time (local time without a
 * zone, read as UTC like ASC dates) make it absolute: SYSTEM, the time of day on the start date (a
 * time earlier than the previous frame's by more than 12 h has crossed midnight); ABSOLUTE, the time
 * since the start; RELATIVE, the time since the previous frame. Wireshark gives RELATIVE frames no
 * timestamp and does not cross midnight; canlab adds the deltas to the start time.
 *
 * BUSMASTER's J1939 and LIN logs hold other protocols' messages (J1939 reassembled over several
 * frames) and are refused by name.
 */
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';
import {
  channelFromFile,
  flatten,
  headLines,
  hexByteTokens,
  lineError,
  makeFrame,
  parseDec,
  parseHex0x,
  readLineBatches,
  tokens,
  type LineAt,
  type LineFormat,
} from './common';

type TimeMode = 'system' | 'absolute' | 'relative';

interface Session {
  /** Whether a BUSMASTER header has been read. */
  header: boolean;
  hex: boolean;
  mode: TimeMode;
  /** Epoch seconds of 00:00 on the start date (UTC). */
  day: number;
  /** Seconds since `day` at which logging started. */
  start: number;
  /** SYSTEM: the previous frame's time of day (the start time before the first frame). */
  timeOfDay: number;
  /** RELATIVE: the previous frame's timestamp, undefined before the first frame. */
  last: number | undefined;
}

const START_TIME = /^START DATE AND TIME\s+(\d+):(\d+):(\d+)\s+(\d+):(\d+):(\d+):(\d+)$/;
const TIME = /^(\d+):(\d+):(\d+):(\d{1,4})$/;
const HALF_DAY = 43200;

/** A BUSMASTER log opens with BUSMASTER's version line. */
export function sniffBusmaster(head: Buffer): boolean {
  const first = headLines(head, 1)[0];
  return first !== undefined && /^\*\*\*BUSMASTER Ver\b/i.test(first);
}

function header(text: string, s: Session, at: LineAt): void {
  const key = text.toUpperCase();
  if (key.startsWith('BUSMASTER')) s.header = true;
  else if (key === '[START LOGGING SESSION]') {
    s.hex = true;
    s.mode = 'system';
    s.day = 0;
    s.start = 0;
    s.timeOfDay = 0;
    s.last = undefined;
  } else if (key.startsWith('PROTOCOL ')) {
    const protocol = key.slice(9).trim();
    if (protocol !== 'CAN')
      throw lineError(
        at,
        `a BUSMASTER ${protocol} log; canlab reads BUSMASTER's CAN logs ("***PROTOCOL CAN***")`,
      );
  } else if (key === 'HEX' || key === 'DEC') s.hex = key === 'HEX';
  else if (key === 'SYSTEM MODE' || key === 'ABSOLUTE MODE' || key === 'RELATIVE MODE')
    s.mode = key.slice(0, -5).toLowerCase() as TimeMode;
  else if (key.startsWith('START DATE AND TIME')) {
    const m = START_TIME.exec(key);
    const day = m === null ? NaN : Date.UTC(Number(m[3]), Number(m[2]) - 1, Number(m[1])) / 1000;
    if (m === null || Number.isNaN(day))
      throw lineError(at, `expected "START DATE AND TIME d:m:yyyy h:m:s:ms", not "${text}"`);
    s.day = day;
    s.start = Number(m[4]) * 3600 + Number(m[5]) * 60 + Number(m[6]) + Number(m[7]) / 1000;
    s.timeOfDay = s.start;
  }
}

function timestamp(token: string, s: Session, at: LineAt): number {
  const m = TIME.exec(token);
  if (m === null) throw lineError(at, `expected a time h:m:s:tttt, not "${token}"`);
  const t = Number(m[1]) * 3600 + Number(m[2]) * 60 + Number(m[3]) + Number(m[4]) / 10 ** m[4]!.length;
  if (s.mode === 'absolute') return s.day + s.start + t;
  if (s.mode === 'relative') return (s.last = (s.last ?? s.day + s.start) + t);
  if (t < s.timeOfDay - HALF_DAY) s.day += 86400;
  s.timeOfDay = t;
  return s.day + t;
}

const TYPES: Record<string, { extended: boolean; remote: boolean; fd: boolean }> = {
  s: { extended: false, remote: false, fd: false },
  x: { extended: true, remote: false, fd: false },
  sr: { extended: false, remote: true, fd: false },
  xr: { extended: true, remote: true, fd: false },
  's-fd': { extended: false, remote: false, fd: true },
  'x-fd': { extended: true, remote: false, fd: true },
};

function frameLine(line: string, s: Session, at: LineAt): CanFrame {
  if (!s.header) throw lineError(at, 'frame line before the BUSMASTER header ("***BUSMASTER Ver …***")');
  const t = tokens(line);
  if (t.length < 5)
    throw lineError(at, 'expected <Time> <Tx/Rx> <Channel> <CAN ID> <Type> <DLC> <DataBytes>');
  const time = timestamp(t[0]!, s, at);
  if (t[1] !== 'Rx' && t[1] !== 'Tx') throw lineError(at, `direction must be Rx or Tx, not "${t[1]!}"`);
  const direction = t[1] === 'Tx' ? 'tx' : 'rx';
  const channelNo = parseDec(t[2]!);
  if (Number.isNaN(channelNo)) throw lineError(at, `bad channel "${t[2]!}"`);
  const channel = channelFromFile(channelNo);
  if (t[4]!.toUpperCase().startsWith('ERR'))
    return makeFrame({ timestamp: time, id: 0, error: true, channel, direction });
  const type = TYPES[t[4]!.toLowerCase()];
  if (type === undefined)
    throw lineError(at, `unknown frame type "${t[4]!}" (s, x, sr, xr, s-fd, x-fd, ERR)`);
  const id = s.hex ? parseHex0x(t[3]!) : parseDec(t[3]!);
  if (Number.isNaN(id) || id > (type.extended ? 0x1fffffff : 0x7ff))
    throw lineError(
      at,
      `bad ${type.extended ? '29' : '11'}-bit CAN id "${t[3]!}" (${s.hex ? 'hex' : 'decimal'} in this log)`,
    );
  const length = parseDec(t[5] ?? '');
  if (Number.isNaN(length) || length > (type.fd ? 64 : 8))
    throw lineError(at, `bad DLC "${t[5] ?? ''}" for a ${type.fd ? 'CAN FD' : 'classic'} frame`);
  const dlc = lengthToDlc(length, type.fd);
  if (type.fd && dlcToLength(dlc, true) !== length)
    throw lineError(at, `${length} bytes is not a CAN FD length (0-8, 12, 16, 20, 24, 32, 48, 64)`);
  const count = t.length - 6;
  const frame = makeFrame({ timestamp: time, id, dlc, channel, direction, ...type });
  // remote frames carry no data; older BUSMASTER versions still wrote DLC bytes for them
  if (type.remote && (count === 0 || count === length)) return frame;
  if (count !== length) throw lineError(at, `frame ${t[3]!} has ${count} data bytes, its DLC says ${length}`);
  frame.data = s.hex ? hexByteTokens(t, 6, count, at) : decimalBytes(t, 6, count, at);
  return frame;
}

function decimalBytes(t: readonly string[], from: number, count: number, at: LineAt): Uint8Array {
  const data = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const v = parseDec(t[from + k]!);
    if (Number.isNaN(v) || v > 255) throw lineError(at, `bad decimal data byte "${t[from + k]!}"`);
    data[k] = v;
  }
  return data;
}

const BUSMASTER: LineFormat<Session> = {
  start: () => ({
    header: false,
    hex: true,
    mode: 'system',
    day: 0,
    start: 0,
    timeOfDay: 0,
    last: undefined,
  }),
  parse(line, at, s) {
    if (line.startsWith('***')) {
      header(line.replace(/^\*+|\*+$/g, '').trim(), s, at);
      return null;
    }
    return frameLine(line, s, at);
  },
};

/** Reads a BUSMASTER CAN log as batches of frames. */
export function readBusmasterBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, BUSMASTER);
}

/** Reads a BUSMASTER CAN log frame by frame. */
export function readBusmaster(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readBusmasterBatches(file));
}

/**
 * Logs of the Lawicel / SLCAN serial protocol (CANUSB, CAN232, CANable and the many adapters that
 * speak it), read only: what an adapter sends the host, one message per CR.
 *
 *     t1D58FE3612FE690507AD      t: 11-bit id (3 hex), DLC (1 digit), data
 *     T18FF00AA20102             T: 29-bit id (8 hex)
 *     r1004 / R18FF00AA4         remote frames (id, DLC, no data)
 *     d / D, b / B               CAN FD without / with bit-rate switch; the DLC is one hex digit 0-F
 *     t1230EA5F                  with timestamps on (Z1): 4 hex digits of milliseconds, 0-EA5F
 *
 * Reconstructed from Lawicel's CANUSB/CAN232 protocol description (commands t, T, r, R, Z) and the
 * SLCAN FD extension (d, D, b, B) as python-can's slcan interface parses it. Lines of other kinds
 * (the CR, z and Z acknowledgements, BEL errors, V, v, N and F replies, commands echoed into the log)
 * carry no frame and are skipped. The timestamp wraps every 60 s; each wrap adds 60 s, so times are
 * relative to the first minute. A log without timestamps gets SavvyCAN's spacing (`loadLawicelFile`):
 * 100 µs per frame. The protocol has one bus, channel 0, and no direction. A log that ends messages
 * with CR alone is split there (its "line" numbers count messages); one with LF is split at LF.
 */
import { dlcToLength, type CanFrame } from '../frame';
import {
  flatten,
  headLines,
  hexRun,
  hexValue,
  lineError,
  makeFrame,
  parseHex,
  readHead,
  readLineBatches,
  type LineFormat,
} from './common';

/** Spacing SavvyCAN gives frames of a log without timestamps. */
const UNTIMED_SPACING_S = 0.0001;
const MESSAGE = /^(?:[tT][0-9A-Fa-f]|[rR][0-9A-Fa-f]|[dDbB][0-9A-Fa-f])[0-9A-Fa-f]*$/;
const KINDS: Record<string, { idLen: number; remote: boolean; fd: boolean; brs: boolean }> = {
  t: { idLen: 3, remote: false, fd: false, brs: false },
  T: { idLen: 8, remote: false, fd: false, brs: false },
  r: { idLen: 3, remote: true, fd: false, brs: false },
  R: { idLen: 8, remote: true, fd: false, brs: false },
  d: { idLen: 3, remote: false, fd: true, brs: false },
  D: { idLen: 8, remote: false, fd: true, brs: false },
  b: { idLen: 3, remote: false, fd: true, brs: true },
  B: { idLen: 8, remote: false, fd: true, brs: true },
};

function messages(head: Buffer): string[] {
  return headLines(Buffer.from(head.toString('latin1').replace(/\r/g, '\n'), 'latin1'), 20);
}

/** Most of the first messages are t/T/r/R/d/D/b/B frames with valid lengths. */
export function sniffLawicel(head: Buffer): boolean {
  const msgs = messages(head).filter((m) => m !== 'z' && m !== 'Z');
  const frames = msgs.filter((m) => MESSAGE.test(m) && parseMessage(m) !== undefined);
  return frames.length >= 3 && frames.length * 4 >= msgs.length * 3;
}

interface Parsed {
  kind: (typeof KINDS)[string];
  extended: boolean;
  id: number;
  dlc: number;
  data: Uint8Array;
  stamp: number | undefined;
}

function parseMessage(m: string): Parsed | undefined {
  const kind = KINDS[m[0]!];
  if (kind === undefined) return undefined;
  const id = parseHex(m.slice(1, 1 + kind.idLen));
  const dlc = hexValue(m.charCodeAt(1 + kind.idLen));
  if (Number.isNaN(id) || dlc < 0 || (!kind.fd && dlc > 8)) return undefined;
  const at = 2 + kind.idLen;
  const count = kind.remote ? 0 : dlcToLength(dlc, kind.fd);
  const rest = m.length - at - count * 2;
  if (rest !== 0 && rest !== 4) return undefined;
  const data = hexRun(m.slice(at, at + count * 2));
  const stamp = rest === 4 ? parseHex(m.slice(m.length - 4)) : undefined;
  if (data === null || Number.isNaN(stamp)) return undefined;
  return { kind, extended: kind.idLen === 8, id, dlc, data, stamp };
}

interface LawicelState {
  frames: number;
  lastMs: number;
  minutes: number;
}

const LAWICEL: LineFormat<LawicelState> = {
  start: () => ({ frames: 0, lastMs: -1, minutes: 0 }),
  parse(line, at, st) {
    if (KINDS[line[0]!] === undefined) return null; // acknowledgements, replies, echoed commands
    const p = parseMessage(line);
    if (p === undefined)
      throw lineError(
        at,
        `"${line}" is not a well-formed ${line[0]!} message (id, DLC, data, optional 4-digit timestamp)`,
      );
    if (p.id > (p.extended ? 0x1fffffff : 0x7ff))
      throw lineError(at, `id ${p.id.toString(16)} is out of range`);
    let timestamp: number;
    if (p.stamp === undefined) timestamp = st.frames * UNTIMED_SPACING_S;
    else {
      if (p.stamp > 59999) throw lineError(at, `timestamp ${p.stamp} ms is past the protocol's 59999`);
      if (p.stamp < st.lastMs) st.minutes++;
      st.lastMs = p.stamp;
      timestamp = st.minutes * 60 + p.stamp / 1000;
    }
    st.frames++;
    return makeFrame({
      timestamp,
      id: p.id,
      extended: p.extended,
      remote: p.kind.remote,
      fd: p.kind.fd,
      brs: p.kind.brs,
      dlc: p.dlc,
      data: p.data,
    });
  },
};

/** Reads a Lawicel/SLCAN log as batches of frames. */
export async function* readLawicelBatches(file: string): AsyncGenerator<CanFrame[]> {
  const eol = (await readHead(file)).includes(13) ? 13 : 10;
  yield* readLineBatches(file, LAWICEL, eol);
}

/** Reads a Lawicel/SLCAN log frame by frame. */
export function readLawicel(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readLawicelBatches(file));
}

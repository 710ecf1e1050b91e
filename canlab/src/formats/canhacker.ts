/**
 * CANHacker trace files (`.trc`, not PEAK's: no `;` header, no message numbers), read only.
 * Reconstructed from SavvyCAN's reader (`isCANHackerFile`, `loadCANHackerFile` in framefileio.cpp),
 * which quotes the layout:
 *
 *     Time   ID     DLC Data                    Comment
 *     00.000 00004000 8 36 47 19 43 01 00 00 80
 *
 * The first line is the header. Each row: time in seconds with a `.` or `,` decimal mark, the id
 * in hex, the DLC, the data bytes, then an optional comment. CANHacker's clock counts seconds
 * within the minute: when it goes backwards a minute has passed (SavvyCAN adds 60 s the same way),
 * so times are relative to the first minute. An id written with 8 digits or above 0x7FF is 29-bit.
 * The trace has one bus (channel 0) and no direction.
 */
import type { CanFrame } from '../frame';
import {
  flatten,
  frameFromId,
  headLines,
  hexByteTokens,
  lineError,
  parseDec,
  parseHex,
  readLineBatches,
  tokens,
  type LineFormat,
} from './common';

const ROW = /^\d+[.,]\d+\s+[0-9A-Fa-f]{1,8}\s+[0-8](?:\s+[0-9A-Fa-f]{2})*(?:\s+.*)?$/;
const HEADER = /^time\s+id\s+dlc\s+data/i;

/** SavvyCAN's test: "CANHacker" on the first line; or CANHacker's column header followed by rows. */
export function sniffCanHacker(head: Buffer): boolean {
  const lines = headLines(head, 6);
  if (lines.length === 0) return false;
  if (lines[0]!.toUpperCase().includes('CANHACKER')) return true;
  return HEADER.test(lines[0]!) && lines.length > 1 && lines.slice(1).every((l) => ROW.test(l));
}

interface CanHackerState {
  sawHeader: boolean;
  last: number;
  minutes: number;
}

const CANHACKER: LineFormat<CanHackerState> = {
  start: () => ({ sawHeader: false, last: -1, minutes: 0 }),
  parse(line, at, st) {
    if (!st.sawHeader) {
      st.sawHeader = true;
      return null;
    }
    const t = tokens(line);
    if (t.length < 3) throw lineError(at, 'expected "time id dlc bytes… [comment]"');
    const c0 = t[0]!.charCodeAt(0);
    const seconds = Number(t[0]!.replace(',', '.'));
    if (!(c0 >= 48 && c0 <= 57) || !Number.isFinite(seconds)) throw lineError(at, `bad time "${t[0]!}"`);
    if (seconds < st.last) st.minutes++;
    st.last = seconds;
    const id = parseHex(t[1]!);
    if (Number.isNaN(id)) throw lineError(at, `bad id "${t[1]!}"`);
    const dlc = parseDec(t[2]!);
    if (Number.isNaN(dlc) || dlc > 8) throw lineError(at, `bad DLC "${t[2]!}"`);
    if (t.length - 3 < dlc) throw lineError(at, `${t.length - 3} data bytes, the DLC says ${dlc}`);
    return frameFromId(st.minutes * 60 + seconds, id, hexByteTokens(t, 3, dlc, at), at, {
      extended: t[1]!.length === 8 || id > 0x7ff,
    });
  },
};

/** Reads a CANHacker trace as batches of frames. */
export function readCanHackerBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, CANHACKER);
}

/** Reads a CANHacker trace frame by frame. */
export function readCanHacker(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCanHackerBatches(file));
}

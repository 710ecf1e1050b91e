/**
 * CSV exported by comma.ai's cabana (openpilot `tools/cabana`), read only:
 *
 *     time,addr,bus,data
 *     15.460,0x440,1,0x4000800000000000          cabana (C++): File > Export to CSV
 *     240.47911496100002,53,0,0acc0ade0074bf9e   cabana (web, "Save Log"): decimal addr, bare hex
 *
 * `time` is seconds since the start of the route (relative), `addr` the arbitration id (0x hex, or
 * decimal as the older web cabana wrote it; SavvyCAN's `loadCabanaFile` reads it as decimal too),
 * `bus` the panda bus number (`src`: 0, 1, 2…; 128 + n for frames panda sent on bus n), kept as
 * the channel, and `data` the payload as one run of hex digits, 0x-prefixed or not. openpilot
 * marks no extended flag: an addr above 0x7FF is a 29-bit id. More than 8 bytes (CAN FD cars) read
 * as a CAN FD frame, BRS unknown and so off.
 */
import type { CanFrame } from '../frame';
import {
  frameFromId,
  fields,
  flatten,
  headLines,
  hexRun,
  lineError,
  parseDec,
  parseHex0x,
  readLineBatches,
  type LineFormat,
} from './common';

const HEADER = 'time,addr,bus,data';

/** The header `time,addr,bus,data`. */
export function sniffCabana(head: Buffer): boolean {
  return headLines(head, 1)[0]?.replace(/\s/g, '').toLowerCase() === HEADER;
}

const CABANA: LineFormat<{ sawHeader: boolean }> = {
  start: () => ({ sawHeader: false }),
  parse(line, at, st) {
    if (!st.sawHeader) {
      if (line.replace(/\s/g, '').toLowerCase() !== HEADER)
        throw lineError(at, `the first line must be the header "${HEADER}"`);
      st.sawHeader = true;
      return null;
    }
    const f = fields(line, ',');
    if (f.length !== 4) throw lineError(at, `expected 4 fields (${HEADER}), found ${f.length}`);
    const time = Number(f[0]);
    if (f[0]!.length === 0 || !Number.isFinite(time)) throw lineError(at, `bad time "${f[0]!}"`);
    const addr = f[1]!.startsWith('0x') || f[1]!.startsWith('0X') ? parseHex0x(f[1]!) : parseDec(f[1]!);
    if (Number.isNaN(addr)) throw lineError(at, `bad addr "${f[1]!}"`);
    const bus = parseDec(f[2]!);
    if (Number.isNaN(bus)) throw lineError(at, `bad bus "${f[2]!}"`);
    const hex = f[3]!.startsWith('0x') || f[3]!.startsWith('0X') ? f[3]!.slice(2) : f[3]!;
    const data = hexRun(hex);
    if (data === null) throw lineError(at, `data "${f[3]!}" is not a run of hex byte pairs`);
    return frameFromId(time, addr, data, at, { channel: bus });
  },
};

/** Reads a cabana CSV as batches of frames. */
export function readCabanaBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, CABANA);
}

/** Reads a cabana CSV frame by frame. */
export function readCabana(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCabanaBatches(file));
}

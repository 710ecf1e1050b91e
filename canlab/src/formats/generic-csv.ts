/**
 * SavvyCAN's "Generic ID/Data CSV" (`saveGenericCSVFile` / `loadGenericCSVFile` in its
 * framefileio.cpp), read only: a header line, then one frame per row, the id in hex and the data
 * as space-separated hex bytes (SavvyCAN leaves a trailing space):
 *
 *     ID,Data Bytes
 *     0000021A,FE 36 12 FE 69 05 07 AD
 *     0000048C,00
 *
 * The layout has no time, bus, direction or extended flag. As SavvyCAN does, canlab spaces the
 * rows 5 ms apart (row n at n × 0.005 s, relative), reads every frame on channel 0, and takes an
 * id above 0x7FF as 29-bit. A first line that is not a row is the header and is skipped.
 */
import type { CanFrame } from '../frame';
import {
  frameFromId,
  flatten,
  headLines,
  hexByteTokens,
  lineError,
  parseHex0x,
  readLineBatches,
  tokens,
  type LineFormat,
} from './common';

/** Spacing SavvyCAN gives the rows of a file without times. */
const ROW_SPACING_S = 0.005;
const ROW = /^(?:0x)?[0-9A-Fa-f]{1,8}\s*,\s*(?:[0-9A-Fa-f]{2}(?:\s+|$)){0,8}$/;

/** A header starting `ID,Data` or none, then rows of `hexid,hex bytes` (the first three tell). */
export function sniffGenericCsv(head: Buffer): boolean {
  const lines = headLines(head, 4);
  const rows = lines.length > 0 && /^id\s*,\s*data/i.test(lines[0]!) ? lines.slice(1) : lines;
  return rows.length > 0 && rows.slice(0, 3).every((l) => ROW.test(l));
}

const GENERIC: LineFormat<{ rows: number; first: boolean }> = {
  start: () => ({ rows: 0, first: true }),
  parse(line, at, st) {
    const first = st.first;
    st.first = false;
    const comma = line.indexOf(',');
    const id = comma < 0 ? NaN : parseHex0x(line.slice(0, comma).trim());
    if (Number.isNaN(id)) {
      if (first) return null; // the header
      throw lineError(at, `expected "hexid,hex bytes", not "${line}"`);
    }
    const t = tokens(line.slice(comma + 1));
    return frameFromId(st.rows++ * ROW_SPACING_S, id, hexByteTokens(t, 0, t.length, at), at);
  },
};

/** Reads a generic id,data CSV as batches of frames. */
export function readGenericCsvBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, GENERIC);
}

/** Reads a generic id,data CSV frame by frame. */
export function readGenericCsv(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readGenericCsvBatches(file));
}

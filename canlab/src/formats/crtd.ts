/**
 * CRTD logs, read only: the text format of the Open Vehicle Monitoring System (OVMS). The layout
 * follows OVMS's specification, "CRTD CAN Log Format" version 3.0 (docs.openvehicles.com/en/latest/
 * crtd/), and its writer (OVMS.V3 components/can/src/canformat_crtd.cpp); SavvyCAN's loader
 * (framefileio.cpp, `loadCRTDFile`) reads the same records.
 *
 *     1542473901.000000 CXX OVMS CRTD                                 comment
 *     1542473901.020305 1R11 213 00 00 00 00 c0 01 00 00              bus 1, received, 11-bit id
 *     1542473901.021 2T29 18FF00AA 01 02                              bus 2, transmitted, 29-bit id
 *     1320745424.002 R11 402 FA 01 C3 A0 96 00 07 01                  no bus number: bus 1
 *     1542473901.030000 1CER TX_Fail T11 100 01 02 03                 error/status record
 *
 * Space-separated fields: a timestamp in seconds with a millisecond or microsecond fraction (the
 * spec suggests UTC epoch seconds; canlab keeps the number as written), a record type, the record's
 * data. Frame records are R11/R29 (received) and T11/T29 (transmitted), optionally prefixed by the
 * bus number (1..n), then a hex id and up to 8 hex data bytes (case-independent, zero padding
 * optional). Bus N is channel N - 1, as for ASC and BLF. Records starting with C (after the bus
 * number) are comments, status, events and commands (CXX, CER, CST, CEV, CVR, CBC, CDP, CDR, CFC,
 * CFA) and carry no frame; the spec asks readers to discard record types they do not know too.
 * CRTD has no remote, error or CAN FD frames.
 */
import type { CanFrame } from '../frame';
import {
  channelFromFile,
  flatten,
  headLines,
  hexByteTokens,
  lineError,
  makeFrame,
  parseDec,
  parseHex,
  readLineBatches,
  tokens,
  type LineFormat,
} from './common';

/** A record type: optional bus digits, then R/T and 11/29 for a frame, or C and two letters. */
const RECORD = /^(\d*)(?:([RT])(11|29)|C[A-Z]{2})$/;
const TIMESTAMP = /^\d+(?:\.\d+)?$/;

/** CRTD: every line a timestamp then a record type (frames or C.. records), at least one frame. */
export function sniffCrtd(head: Buffer): boolean {
  const lines = headLines(head, 20);
  let frames = 0;
  for (const line of lines) {
    const t = tokens(line);
    const m = t.length >= 2 && TIMESTAMP.test(t[0]!) ? RECORD.exec(t[1]!) : null;
    if (m === null) return false;
    if (m[2] !== undefined) frames++;
  }
  return frames > 0;
}

const CRTD: LineFormat<null> = {
  start: () => null,
  parse(line, at) {
    const t = tokens(line);
    if (!TIMESTAMP.test(t[0]!)) throw lineError(at, `expected a timestamp in seconds, not "${t[0]!}"`);
    const m = RECORD.exec(t[1] ?? '');
    if (m === null || m[2] === undefined) return null;
    const [, bus, dir, bits] = m;
    const extended = bits === '29';
    const idTok = t[2] ?? '';
    const id = parseHex(idTok);
    if (Number.isNaN(id)) throw lineError(at, `bad CAN id "${idTok}"`);
    if (id > (extended ? 0x1fffffff : 0x7ff))
      throw lineError(at, `id ${idTok} does not fit the ${bits}-bit id its record type ${t[1]!} says`);
    const count = t.length - 3;
    if (count > 8) throw lineError(at, `${count} data bytes; a CRTD frame carries at most 8`);
    const data = hexByteTokens(t, 3, count, at);
    return makeFrame({
      timestamp: Number(t[0]),
      id,
      extended,
      dlc: count,
      data,
      channel: bus === '' ? 0 : channelFromFile(parseDec(bus!)),
      direction: dir === 'T' ? 'tx' : 'rx',
    });
  },
};

/** Reads a CRTD log as batches of frames. */
export function readCrtdBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, CRTD);
}

/** Reads a CRTD log frame by frame. */
export function readCrtd(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCrtdBatches(file));
}

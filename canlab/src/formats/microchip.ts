/**
 * Logs of Microchip's CAN BUS Analyzer tool (`.log`, `.can`), read only. Reconstructed from the
 * readers and writer in SavvyCAN's framefileio.cpp (`loadMicrochipFile`, `saveMicrochipFile`), whose
 * comments quote the tool's own rows:
 *
 *     //---------------------------------      a line starting with // opens or closes a comment block
 *     Microchip Technology Inc.
 *     CAN BUS Analyzer
 *     Logging Started: 23/9/2015 22:17:43
 *     //---------------------------------
 *     166064;RX;0x0000021A;8;0xFE;0x36;0x12;0xFE;0x69;0x05;0x07;0xAD;
 *     1218;RX;0x236;1;0x00;0x00;0x00;0x00;0x00;0x00;0x00;0xF0      the tool pads rows to 8 bytes
 *
 * Fields: time in milliseconds (relative: the start time in the header has no year-proof format),
 * RX/TX, the id (0x hex, or decimal), the data length, then the bytes. Only the first `length`
 * bytes are the frame's; the id has no extended flag, so an id above 0x7FF is a 29-bit id (as
 * SavvyCAN reads it). The log knows one bus: channel 0.
 */
import type { CanFrame } from '../frame';
import {
  frameFromId,
  fields,
  flatten,
  headLines,
  hexByteTokens,
  lineError,
  parseDec,
  parseHex0x,
  readLineBatches,
  type LineFormat,
} from './common';

const ROW = /^\d+;(?:RX|TX);(?:0x)?[0-9A-F]+;\d;/i;

/** The tool's banner, or rows of `ms;RX|TX;id;len;bytes…` outside the comment block. */
export function sniffMicrochip(head: Buffer): boolean {
  const lines = headLines(head);
  if (lines.some((l) => l.startsWith('Microchip Technology Inc'))) return true;
  const rows = lines.filter((l) => !l.startsWith('//'));
  return rows.length > 0 && rows.slice(0, 5).every((l) => ROW.test(l));
}

function parseId(tok: string): number {
  return tok.startsWith('0x') || tok.startsWith('0X') ? parseHex0x(tok) : parseDec(tok);
}

const MICROCHIP: LineFormat<{ inComment: boolean }> = {
  start: () => ({ inComment: false }),
  parse(line, at, st) {
    if (line.startsWith('//')) {
      st.inComment = !st.inComment;
      return null;
    }
    if (st.inComment) return null;
    const f = fields(line, ';');
    if (f[f.length - 1] === '') f.pop();
    if (f.length < 4) throw lineError(at, 'expected "ms;RX|TX;id;length;bytes…"');
    const ms = parseDec(f[0]!);
    if (Number.isNaN(ms)) throw lineError(at, `bad time "${f[0]!}"`);
    const dir = f[1]!.toUpperCase();
    if (dir !== 'RX' && dir !== 'TX') throw lineError(at, `direction must be RX or TX, not "${f[1]!}"`);
    const id = parseId(f[2]!);
    if (Number.isNaN(id)) throw lineError(at, `bad id "${f[2]!}"`);
    const len = parseDec(f[3]!);
    if (Number.isNaN(len) || len > 8) throw lineError(at, `bad data length "${f[3]!}"`);
    if (f.length - 4 < len) throw lineError(at, `${f.length - 4} data bytes, the length says ${len}`);
    if (f.length - 4 > 8) throw lineError(at, `${f.length - 4} data bytes; a row holds at most 8`);
    return frameFromId(ms / 1000, id, hexByteTokens(f, 4, len, at), at, {
      direction: dir === 'TX' ? 'tx' : 'rx',
    });
  },
};

/** Reads a Microchip CAN BUS Analyzer log as batches of frames. */
export function readMicrochipBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, MICROCHIP);
}

/** Reads a Microchip CAN BUS Analyzer log frame by frame. */
export function readMicrochip(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readMicrochipBatches(file));
}

/**
 * Kvaser's text logs (CanKing / Kvaser Memorator "text" export, `.txt`), in hex or in decimal, read
 * only. Reconstructed from SavvyCAN's reader (`isKvaserFile`, `loadKvaserFile` in framefileio.cpp),
 * which quotes the layout:
 *
 *     Chn Identifier Flg   DLC  D0...1...2...3...4...5...6..D7       Time     Dir
 *      0    000000AD         8  FF  FF  00  00  00  00  00  00     154.266550 R
 *
 * Fields, separated by spaces: channel (0-based, as `CanFrame.channel`), identifier, flags (zero or
 * more words: X extended, R remote, ERR error frame, FD, BRS, ESI), DLC, the data bytes, time in
 * seconds (relative to the start of the log), direction R or T. The export writes ids and bytes in
 * hex or in decimal and says neither in the file, so they are two formats here, told apart by
 * content (see `sniffKvaserHex`): hex ids are zero-padded to 8 digits or hold a letter, decimal
 * bytes reach three digits. An id above 0x7FF is 29-bit even without the X flag, as SavvyCAN reads it.
 */
import { dlcToLength, type CanFrame } from '../frame';
import {
  flatten,
  headLines,
  lineError,
  makeFrame,
  parseDec,
  parseHex,
  readLineBatches,
  tokens,
  type LineAt,
  type LineFormat,
} from './common';

const FLAG = /^[A-Z]+$/;
const HEADER = /^chn\s+identifier\s+flg\s+dlc\s+d0/i;

function kvaserRows(head: Buffer): string[][] | undefined {
  const lines = headLines(head, 12);
  if (lines.length < 2 || !HEADER.test(lines[0]!)) return undefined;
  return lines.slice(1).map(tokens);
}

function looksHex(rows: string[][]): boolean {
  return rows.some(
    (t) => t[1] !== undefined && (/^[0-9A-Fa-f]{8}$/.test(t[1]) || /[A-Fa-f]/.test(t.slice(1, -2).join(''))),
  );
}

/** Kvaser's header line, and rows whose ids are 8 hex digits or hold a hex letter. */
export function sniffKvaserHex(head: Buffer): boolean {
  const rows = kvaserRows(head);
  return rows !== undefined && looksHex(rows);
}

/** Kvaser's header line, and rows that do not look hex (see sniffKvaserHex). */
export function sniffKvaserDec(head: Buffer): boolean {
  const rows = kvaserRows(head);
  return rows !== undefined && !looksHex(rows);
}

function kvaserFormat(radix: 16 | 10): LineFormat<{ sawHeader: boolean }> {
  const num = radix === 16 ? parseHex : parseDec;
  return {
    start: () => ({ sawHeader: false }),
    parse(line, at, st) {
      if (!st.sawHeader) {
        if (!HEADER.test(line))
          throw lineError(at, 'the first line must be Kvaser\'s header "Chn Identifier Flg DLC D0…"');
        st.sawHeader = true;
        return null;
      }
      return parseRow(tokens(line), num, at);
    },
  };
}

function parseRow(t: string[], num: (s: string) => number, at: LineAt): CanFrame {
  if (t.length < 5) throw lineError(at, 'expected "channel id [flags] dlc bytes… time R|T"');
  const channel = parseDec(t[0]!);
  if (Number.isNaN(channel)) throw lineError(at, `bad channel "${t[0]!}"`);
  const id = num(t[1]!);
  if (Number.isNaN(id)) throw lineError(at, `bad identifier "${t[1]!}"`);
  let k = 2;
  const flags = new Set<string>();
  while (k < t.length && FLAG.test(t[k]!)) flags.add(t[k++]!);
  const dlc = parseDec(t[k] ?? '');
  if (Number.isNaN(dlc) || dlc > 15) throw lineError(at, `bad DLC "${t[k] ?? ''}"`);
  k++;
  const fd = flags.has('FD');
  const remote = flags.has('R');
  const count = remote ? 0 : dlcToLength(dlc, fd);
  if (t.length - k - 2 !== count)
    throw lineError(at, `${Math.max(t.length - k - 2, 0)} data bytes, the DLC says ${count}`);
  const data = new Uint8Array(count);
  for (let i = 0; i < count; i++) {
    const v = num(t[k + i]!);
    if (Number.isNaN(v) || v > 255) throw lineError(at, `bad data byte "${t[k + i]!}"`);
    data[i] = v;
  }
  const time = Number(t[t.length - 2]);
  if (!Number.isFinite(time)) throw lineError(at, `bad time "${t[t.length - 2]!}"`);
  const dir = t[t.length - 1]!;
  if (dir !== 'R' && dir !== 'T') throw lineError(at, `direction must be R or T, not "${dir}"`);
  if (id > 0x1fffffff) throw lineError(at, `identifier ${t[1]!} is over 0x1FFFFFFF`);
  return makeFrame({
    timestamp: time,
    id,
    extended: flags.has('X') || id > 0x7ff,
    remote,
    error: flags.has('ERR'),
    fd,
    brs: flags.has('BRS'),
    esi: flags.has('ESI'),
    dlc,
    data,
    channel,
    direction: dir === 'T' ? 'tx' : 'rx',
  });
}

const HEX = kvaserFormat(16);
const DEC = kvaserFormat(10);

/** Reads a Kvaser hex text log as batches of frames. */
export function readKvaserHexBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, HEX);
}

/** Reads a Kvaser hex text log frame by frame. */
export function readKvaserHex(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readKvaserHexBatches(file));
}

/** Reads a Kvaser decimal text log as batches of frames. */
export function readKvaserDecBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, DEC);
}

/** Reads a Kvaser decimal text log frame by frame. */
export function readKvaserDec(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readKvaserDecBatches(file));
}

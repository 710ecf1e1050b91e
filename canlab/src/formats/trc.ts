/**
 * PEAK PCAN-View TRC trace files (read only), versions 1.0, 1.1, 1.2, 1.3, 2.0 and 2.1, as PEAK's
 * "PCAN-Trace format" description lays them out (its example file of every version is a test
 * fixture), and as python-can's TRCWriter writes 1.0 and 2.1.
 *
 * Header lines start with `;`: `;$FILEVERSION=2.1`, `;$STARTTIME=<days since 1899-12-30, UTC>`,
 * `;$COLUMNS=N,O,T,B,I,d,R,L,D` (2.x). Without `;$FILEVERSION` the file is read as 1.0.
 *
 *     1.0:   1)      1841  0001  8  00 11 22 33 44 55 66 77          N) O(ms) ID DLC data|RTR
 *     1.1:   1)      1841.0  Rx         0001  8  00 11 ...           N) O Type ID DLC data|RTR
 *     1.2:   1)      1841.000 1  Rx         0001  8  00 11 ...       N) O Bus Type ID DLC data|RTR
 *     1.3:   1)      1841.000 1  Rx         0001 -  8  00 11 ...     N) O Bus Type ID Reserved DLC data|RTR
 *     2.x:   columns as named by `;$COLUMNS`; T is DT (CAN), FD (FD), FB (FD+BRS), FE (FD+ESI),
 *            BI (FD+BRS+ESI), RR (remote), ER (error frame), ST/EC/EV (status, error counter,
 *            event: skipped); L is the DLC (2.1), l the data length (2.0).
 *
 * An id of more than 4 hex digits is extended (as PEAK writes 4 digits for standard ids and 8 for
 * extended ones). Timestamps: start time + offset (ms); 1.0 files have no start time, so their
 * timestamps are relative. The Bus column counts from 1 and `CanFrame.channel` from 0 (python-can's
 * convention for BLF and ASC, applied here too), so the channel is Bus - 1; 0 when there is no Bus
 * column (1.0, 1.1, 2.x without B) or it says `-`, and a Bus of 0 reads as 0.
 * Error frames (`ER`, 1.x `Error`, 1.0 `ERROR` before the data) keep their data bytes; their id is
 * 0 when the line has none. PEAK's 2.0 example writes error frames without the id and length
 * columns at all (`ER  Rx  04 00 02 00 00`): the bytes after the direction are the data.
 */
import { CanlabInputError } from '../errors';
import { dlcToLength, lengthToDlc, type CanFrame } from '../frame';
import {
  BATCH_FRAMES,
  channelFromFile,
  flatten,
  headLines,
  parseDec,
  parseHex,
  textLines,
  tokens,
} from './common';

type Version = '1.0' | '1.1' | '1.2' | '1.3' | '2.0' | '2.1';
const VERSIONS = new Set(['1.0', '1.1', '1.2', '1.3', '2.0', '2.1']);

interface State {
  version: Version;
  start: number;
  columns: Map<string, number> | undefined;
}

const TRC_V1_MESSAGE = /^\d+\)\s+\d+(?:\.\d+)?\s/;

/**
 * PEAK's TRC: a `;$FILEVERSION` header (1.1 and later), or 1.0's `;` comment block followed by
 * numbered messages (`1)  1841  0001 ...`). CANHacker also writes `.trc` files, but without `;`
 * comments and with a different message line.
 */
export function sniffTrc(head: Buffer): boolean {
  const lines = headLines(head);
  if (lines.some((l) => l.startsWith(';$FILEVERSION='))) return true;
  const comments = lines.filter((l) => l.startsWith(';'));
  const first = lines.find((l) => !l.startsWith(';'));
  return comments.length > 0 && first !== undefined && TRC_V1_MESSAGE.test(first);
}

/** Reads a TRC file as batches of frames. */
export async function* readTrcBatches(file: string): AsyncGenerator<CanFrame[]> {
  const st: State = { version: '1.0', start: 0, columns: undefined };
  for await (const { lines, firstLine } of textLines(file)) {
    let out: CanFrame[] = [];
    for (let i = 0; i < lines.length; i++) {
      const where = `${file}:${firstLine + i}`;
      const line = lines[i]!.trim();
      if (line.length === 0) continue;
      if (line.charCodeAt(0) === 59 /* ; */) {
        header(line, st, where);
        continue;
      }
      const t = tokens(line);
      const frame = st.version.startsWith('2') ? parseV2(t, st, where) : parseV1(t, st, where);
      if (frame !== null) out.push(frame);
      if (out.length === BATCH_FRAMES) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
}

/** Reads a TRC file frame by frame. */
export function readTrc(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readTrcBatches(file));
}

function header(line: string, st: State, where: string): void {
  if (!line.startsWith(';$')) return;
  const eq = line.indexOf('=');
  if (eq < 0) return;
  const key = line.slice(2, eq).trim().toUpperCase();
  const value = line.slice(eq + 1).trim();
  if (key === 'FILEVERSION') {
    if (!VERSIONS.has(value))
      throw new CanlabInputError(
        where,
        `unsupported TRC version ${value} (supported: 1.0, 1.1, 1.2, 1.3, 2.0, 2.1)`,
      );
    st.version = value as Version;
  } else if (key === 'STARTTIME') {
    // PEAK's own 1.2 example ends the value with a stray ';'
    const days = Number(value.endsWith(';') ? value.slice(0, -1) : value);
    if (!Number.isFinite(days)) throw new CanlabInputError(where, `bad start time "${value}"`);
    // OLE automation date: days since 1899-12-30 00:00 UTC; 25569 days before the Unix epoch
    st.start = (days - 25569) * 86400;
  } else if (key === 'COLUMNS') {
    const cols = value.split(',').map((c) => c.trim());
    st.columns = new Map(cols.map((c, i) => [c, i]));
    for (const need of ['O', 'T', 'I', 'D']) {
      if (!st.columns.has(need)) throw new CanlabInputError(where, `TRC column list lacks "${need}"`);
    }
    if (!st.columns.has('L') && !st.columns.has('l'))
      throw new CanlabInputError(where, 'TRC column list lacks a length column ("L" or "l")');
  }
}

function parseTime(tok: string | undefined, st: State, where: string): number {
  const ms = Number(tok);
  if (tok === undefined || tok.length === 0 || !Number.isFinite(ms))
    throw new CanlabInputError(where, `bad time offset "${tok ?? ''}"`);
  return st.start + ms / 1000;
}

function parseTrcId(tok: string | undefined, where: string): { id: number; extended: boolean } {
  const id = parseHex(tok ?? '');
  if (tok === undefined || Number.isNaN(id)) throw new CanlabInputError(where, `bad CAN id "${tok ?? ''}"`);
  const extended = tok.length > 4;
  if (extended ? id > 0x1fffffff : id > 0x7ff) throw new CanlabInputError(where, `id ${tok} is out of range`);
  return { id, extended };
}

function parseBytes(t: string[], from: number, count: number, where: string, what: string): Uint8Array {
  const have = t.length - from;
  if (have > count)
    throw new CanlabInputError(where, `${what} has ${have} data bytes, more than its DLC allows (${count})`);
  if (have < count)
    throw new CanlabInputError(where, `${what} has ${Math.max(have, 0)} data bytes, its DLC says ${count}`);
  const data = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const v = parseHex(t[from + k]!);
    if (Number.isNaN(v) || v > 255) throw new CanlabInputError(where, `bad data byte "${t[from + k]!}"`);
    data[k] = v;
  }
  return data;
}

function parseV1(t: string[], st: State, where: string): CanFrame | null {
  if (!t[0]!.endsWith(')'))
    throw new CanlabInputError(where, `expected a message number like "1)", not "${t[0]!}"`);
  let k = 1;
  const timestamp = parseTime(t[k++], st, where);
  let channel = 0;
  let type = 'Rx';
  if (st.version === '1.2' || st.version === '1.3') {
    const bus = parseDec(t[k] ?? '');
    if (Number.isNaN(bus)) throw new CanlabInputError(where, `bad bus number "${t[k] ?? ''}"`);
    channel = channelFromFile(bus);
    k++;
  }
  if (st.version !== '1.0') type = t[k++] ?? '';
  if (type === 'Warng') return null;
  if (type !== 'Rx' && type !== 'Tx' && type !== 'Error')
    throw new CanlabInputError(where, `unknown message type "${type}"`);
  const idTok = t[k++];
  if (st.version === '1.0' && idTok === 'FFFFFFFF') return null; // bus information line
  const { id, extended } = parseTrcId(idTok, where);
  if (st.version === '1.3') k++; // reserved column
  const dlc = parseDec(t[k] ?? '');
  if (Number.isNaN(dlc) || dlc > 15) throw new CanlabInputError(where, `bad DLC "${t[k] ?? ''}"`);
  k++;
  const frame: CanFrame = {
    timestamp,
    id,
    extended,
    remote: false,
    error: type === 'Error',
    fd: false,
    brs: false,
    esi: false,
    dlc,
    data: new Uint8Array(0),
    channel,
  };
  if (st.version !== '1.0') frame.direction = type === 'Tx' ? 'tx' : 'rx';
  if (t[k] === 'RTR') {
    frame.remote = true;
    return frame;
  }
  if (st.version === '1.0' && t[k] === 'ERROR') {
    frame.error = true;
    k++;
  }
  frame.data = parseBytes(t, k, dlcToLength(dlc, false), where, `frame ${idTok!}`);
  return frame;
}

const V2_FD: Record<string, [boolean, boolean]> = {
  FD: [false, false],
  FB: [true, false],
  FE: [false, true],
  BI: [true, true],
};

function parseV2(t: string[], st: State, where: string): CanFrame | null {
  const cols = st.columns;
  if (cols === undefined)
    throw new CanlabInputError(
      where,
      `TRC ${st.version} file has no ;$COLUMNS header before its first message`,
    );
  const col = (name: string): string | undefined => {
    const i = cols.get(name);
    return i === undefined ? undefined : t[i];
  };
  const type = col('T');
  if (type === 'ST' || type === 'EC' || type === 'EV') return null;
  if (type === undefined || !(type === 'DT' || type === 'RR' || type === 'ER' || type in V2_FD)) {
    throw new CanlabInputError(where, `unknown message type "${type ?? ''}"`);
  }
  const timestamp = parseTime(col('O'), st, where);
  let channel = 0;
  const bus = col('B');
  if (bus !== undefined && bus !== '-') {
    const n = parseDec(bus);
    if (Number.isNaN(n)) throw new CanlabInputError(where, `bad bus number "${bus}"`);
    channel = channelFromFile(n);
  }
  if (type === 'ER' && isDirection(col('I')))
    return errorWithoutColumns(t, cols.get('I')!, timestamp, channel, where);
  const fdFlags = V2_FD[type];
  const fd = fdFlags !== undefined;
  const idTok = col('I');
  let id = 0;
  let extended = false;
  if (type !== 'ER' || (idTok !== undefined && idTok !== '-')) ({ id, extended } = parseTrcId(idTok, where));
  let dlc: number;
  const L = col('L');
  if (L !== undefined && cols.has('L')) {
    dlc = parseDec(L);
    if (Number.isNaN(dlc) || dlc > 15) throw new CanlabInputError(where, `bad DLC "${L}"`);
  } else {
    const len = parseDec(col('l') ?? '');
    if (Number.isNaN(len) || len > (fd ? 64 : 8))
      throw new CanlabInputError(where, `bad data length "${col('l') ?? ''}"`);
    dlc = lengthToDlc(len, fd);
    if (dlcToLength(dlc, fd) !== len)
      throw new CanlabInputError(where, `data length ${len} is not a CAN FD length`);
  }
  const d = col('d');
  const frame: CanFrame = {
    timestamp,
    id,
    extended,
    remote: type === 'RR',
    error: type === 'ER',
    fd,
    brs: fdFlags?.[0] ?? false,
    esi: fdFlags?.[1] ?? false,
    dlc,
    data: new Uint8Array(0),
    channel,
  };
  if (d === 'Rx' || d === 'Tx') frame.direction = d === 'Tx' ? 'tx' : 'rx';
  if (frame.remote) return frame;
  frame.data = parseBytes(t, cols.get('D')!, dlcToLength(dlc, fd), where, `frame ${idTok ?? '-'}`);
  return frame;
}

function isDirection(tok: string | undefined): boolean {
  return tok === 'Rx' || tok === 'Tx';
}

/**
 * A 2.0 error frame as PEAK's example writes it: no id and no length, so the direction stands in
 * the id's column and the data bytes follow it (`6  1334.522 ER  Rx  04 00 02 00 00`).
 */
function errorWithoutColumns(
  t: string[],
  dirAt: number,
  timestamp: number,
  channel: number,
  where: string,
): CanFrame {
  const count = t.length - dirAt - 1;
  if (count > 8) throw new CanlabInputError(where, `error frame has ${count} data bytes, more than 8`);
  return {
    timestamp,
    id: 0,
    extended: false,
    remote: false,
    error: true,
    fd: false,
    brs: false,
    esi: false,
    dlc: count,
    data: parseBytes(t, dirAt + 1, count, where, 'error frame'),
    channel,
    direction: t[dirAt] === 'Tx' ? 'tx' : 'rx',
  };
}

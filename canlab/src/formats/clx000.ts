/**
 * Logs of CSS Electronics' CL1000 / CL2000 / CL3000 (CLX000) CAN loggers (`.txt`), read only.
 * Reconstructed from the readers that follow CSS Electronics' own description and Wireshark
 * plugin: Wireshark's wiretap/cllog.c (based on CSS Electronics' plugin sources) and SavvyCAN's
 * `loadCLX000File`:
 *
 *     # Logger type: CL2000                      "# key: value" header lines
 *     # Time: 20200113T112237                    session start, YYYYMMDDThhmmss
 *     # Value separator: ";"
 *     # Time format: 4                           how much of the date a row's time repeats
 *     # Time separator: ""  # Time separator ms: ""  # Date separator: ""  # Time and date separator: "T"
 *     Timestamp;Type;ID;Data                     the columns present, in order
 *     13T112237040;1;18FECA00;0C00FF00FFFFFF00
 *
 * Columns: Timestamp, Lost (frames lost, ignored), Type (0 Rx standard, 1 Rx extended, 8 Tx
 * standard, 9 Tx extended), ID (hex), Length, Data (hex digits, no separator). A row's time is its
 * digits laid over the tail of the header time "YYYYMMDDhhmmss000" (ms last), as cllog.c does; the
 * loggers keep local time without a zone, and canlab reads it as UTC. Without a Type column an id
 * above 0x7FF is 29-bit. The loggers record one bus: channel 0.
 */
import type { CanFrame } from '../frame';
import {
  fields,
  flatten,
  frameFromId,
  headLines,
  hexRun,
  lineError,
  parseDec,
  parseHex,
  readLineBatches,
  type LineAt,
  type LineFormat,
} from './common';

const COLUMNS = new Set(['Timestamp', 'Lost', 'Type', 'ID', 'Length', 'Data']);
const TYPES: Record<string, { extended: boolean; direction: 'rx' | 'tx' }> = {
  '0': { extended: false, direction: 'rx' },
  '1': { extended: true, direction: 'rx' },
  '8': { extended: false, direction: 'tx' },
  '9': { extended: true, direction: 'tx' },
};

/** The first line of every CLX000 log: `# Logger type: `. */
export function sniffClx000(head: Buffer): boolean {
  return headLines(head, 1)[0]?.startsWith('# Logger type: ') === true;
}

interface ClxState {
  header: Map<string, string>;
  /** Where each named column is in a row, once the column line has been read. */
  columns: Map<string, number> | undefined;
  sep: string;
  /** "YYYYMMDDhhmmss000" of the session start. */
  start: string;
  /** The "YYYYMMDDhhmm" of the last row and its epoch ms. */
  minute: string;
  minuteMs: number;
}

function separator(st: ClxState, key: string, at: LineAt): string {
  const v = st.header.get(key);
  const m = v === undefined ? null : /^"(.?)"$/.exec(v);
  if (m === null) throw lineError(at, `the header has no valid "# ${key}: "x"" line`);
  return m[1]!;
}

function rowTime(st: ClxState, tok: string, at: LineAt): number {
  const digits = tok.replace(/\D/g, '');
  const base = st.start;
  if (digits.length === 0 || digits.length > base.length) throw lineError(at, `bad timestamp "${tok}"`);
  const t = base.slice(0, base.length - digits.length) + digits;
  // rows share their minute: Date.UTC once per minute, seconds and ms added
  const minute = t.slice(0, 12);
  if (minute !== st.minute) {
    st.minute = minute;
    st.minuteMs = Date.UTC(
      +t.slice(0, 4),
      +t.slice(4, 6) - 1,
      +t.slice(6, 8),
      +t.slice(8, 10),
      +t.slice(10, 12),
    );
  }
  const ms = st.minuteMs + +t.slice(12, 14) * 1000 + +t.slice(14);
  if (!Number.isFinite(ms)) throw lineError(at, `bad timestamp "${tok}"`);
  return ms / 1000;
}

const CLX000: LineFormat<ClxState> = {
  start: () => ({ header: new Map(), columns: undefined, sep: ';', start: '', minute: '', minuteMs: 0 }),
  parse(line, at, st) {
    if (line.startsWith('#')) {
      const m = /^#\s*([^:]+):\s?(.*)$/.exec(line);
      if (m !== null) st.header.set(m[1]!.trim(), m[2]!.trim());
      return null;
    }
    if (st.columns === undefined) {
      const time = /^(\d{8})T(\d{6})$/.exec(st.header.get('Time') ?? '');
      if (time === null) throw lineError(at, 'the header has no "# Time: YYYYMMDDThhmmss" line');
      st.start = `${time[1]!}${time[2]!}000`;
      st.sep = separator(st, 'Value separator', at);
      const cols = line.split(st.sep);
      if (cols.some((c) => !COLUMNS.has(c)) || !cols.includes('ID'))
        throw lineError(
          at,
          `bad column line "${line}": columns are ${[...COLUMNS].join(', ')}, ID among them`,
        );
      st.columns = new Map(cols.map((c, i) => [c, i]));
      return null;
    }
    const cols = st.columns;
    const f = fields(line, st.sep);
    if (f.length !== cols.size) throw lineError(at, `${f.length} fields, the column line names ${cols.size}`);
    const get = (name: string): string | undefined => {
      const i = cols.get(name);
      return i === undefined ? undefined : f[i];
    };
    const timeTok = get('Timestamp');
    const timestamp = timeTok === undefined ? 0 : rowTime(st, timeTok, at);
    const id = parseHex(get('ID')!);
    if (Number.isNaN(id)) throw lineError(at, `bad ID "${get('ID')!}"`);
    const data = hexRun(get('Data') ?? '');
    if (data === null) throw lineError(at, `bad Data "${get('Data')!}"`);
    const lenTok = get('Length');
    if (lenTok !== undefined && parseDec(lenTok) !== data.length)
      throw lineError(at, `Length ${lenTok} but ${data.length} data bytes`);
    const typeTok = get('Type');
    const type = typeTok === undefined ? undefined : TYPES[typeTok];
    if (typeTok !== undefined && type === undefined)
      throw lineError(at, `unknown Type "${typeTok}" (0, 1, 8 or 9)`);
    return frameFromId(timestamp, id, data, at, type ?? {});
  },
};

/** Reads a CLX000 log as batches of frames. */
export function readClx000Batches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, CLX000);
}

/** Reads a CLX000 log frame by frame. */
export function readClx000(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readClx000Batches(file));
}

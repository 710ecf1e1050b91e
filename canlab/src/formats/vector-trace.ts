/**
 * Vector `.trace` logs, read only, as SavvyCAN reads and writes them (framefileio.cpp,
 * `loadTraceFile` and `saveTraceFile`; its file dialog calls them "Vector trace files"). No
 * published description of the format was found; the layout below is the header SavvyCAN quotes from
 * a logger's file ("CAN Logger trace file") and the one its writer produces:
 *
 *     ;  CAN Logger trace file
 *     ;  Start Time : Tue, Nov 17, 2015 :: 11:19:59
 *     ;   + Message Number ... (column description comments)
 *     ;---+-----	-----+------	----+---	+	-+ -- -- -- -- -- -- --
 *              0	00:00:00:0008	00000268	8	55 00 84 03 A8 0D 38 00
 *              1	00:00:00:0021	0000000E	8	1F D3 3F FF 08 FF E0 CB
 *
 * Lines starting with `;` are comments. Frame lines are tab-separated: message number, time since the
 * start as hours:minutes:seconds:tenths-of-milliseconds (four digits, 100 µs units; hours are not
 * limited to 24), the id in hex (8 digits), the DLC, and the data bytes in hex separated by spaces.
 * Timestamps are that elapsed time: the start time comment has no time zone and SavvyCAN's writer
 * puts the time of writing there while writing its frames' own (possibly epoch) timestamps in the
 * column, so adding the two would be wrong for its files. The id has no extended flag: as SavvyCAN
 * reads it, an id above 0x7FF is a 29-bit id. There is no channel (always 0), direction, remote,
 * error or CAN FD frame.
 */
import type { CanFrame } from '../frame';
import {
  fields,
  flatten,
  frameFromId,
  headLines,
  hexByteTokens,
  lineError,
  parseDec,
  parseHex,
  readLineBatches,
  tokens,
  type LineAt,
  type LineFormat,
} from './common';

const TIME = /^(\d+):(\d{1,2}):(\d{1,2}):(\d{4})$/;

/** The frame line `fields` (tab-separated) would parse to, or null when they are not one. */
function frameFields(f: readonly string[]): { time: RegExpExecArray; id: number; dlc: number } | null {
  const time = f.length >= 4 ? TIME.exec(f[1]!) : null;
  if (time === null || Number.isNaN(parseDec(f[0]!))) return null;
  const id = parseHex(f[2]!);
  const dlc = parseDec(f[3]!);
  if (Number.isNaN(id) || Number.isNaN(dlc) || dlc > 8) return null;
  return { time, id, dlc };
}

/** Vector trace: `;` comments and tab-separated frame lines with a h:m:s:tttt time, at least one. */
export function sniffVectorTrace(head: Buffer): boolean {
  let frames = 0;
  for (const line of headLines(head, 40)) {
    if (line.startsWith(';')) continue;
    if (frameFields(fields(line, '\t')) === null) return false;
    frames++;
  }
  return frames > 0;
}

function parseLine(line: string, at: LineAt): CanFrame | null {
  if (line.startsWith(';')) return null;
  const f = fields(line, '\t');
  const parsed = frameFields(f);
  if (parsed === null)
    throw lineError(
      at,
      'expected a frame line: message number, h:m:s:tttt time, hex id and DLC (0-8) separated by tabs, then the data bytes',
    );
  const { time, id, dlc } = parsed;
  const bytes = f.length > 4 ? tokens(f.slice(4).join(' ')) : [];
  if (bytes.length !== dlc)
    throw lineError(at, `frame ${f[2]!} has ${bytes.length} data bytes, its DLC says ${dlc}`);
  const seconds = Number(time[1]) * 3600 + Number(time[2]) * 60 + Number(time[3]) + Number(time[4]) / 10000;
  return frameFromId(seconds, id, hexByteTokens(bytes, 0, dlc, at), at);
}

const TRACE: LineFormat<null> = { start: () => null, parse: (line, at) => parseLine(line, at) };

/** Reads a Vector trace log as batches of frames. */
export function readVectorTraceBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, TRACE);
}

/** Reads a Vector trace log frame by frame. */
export function readVectorTrace(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readVectorTraceBatches(file));
}

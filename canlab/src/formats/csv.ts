/**
 * CSV in SavvyCAN's GVRET layout, read and write. SavvyCAN (framefileio.cpp, `saveNativeCSVFile` and
 * `loadNativeCSVFile`) has written two layouts over the years; both are read:
 *
 *     Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8      current
 *     1436509052249713,00000123,false,Rx,0,4,DE,AD,BE,EF,00,00,00,00,
 *     Time Stamp,ID,Extended,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8          older: no Dir column
 *     166064000,00000228,false,0,4,40,C0,30,F8,00,00,00,00,
 *
 * Time Stamp is in integer microseconds (1 µs resolution), ID 8 hex digits, Extended true/false,
 * Dir Rx/Tx (the older layout has none, so its frames carry no direction), Bus the channel
 * (SavvyCAN numbers buses from 0, as `CanFrame.channel` does, so it is read and written unchanged),
 * LEN the number of data bytes, then SavvyCAN writes all eight D columns whatever LEN says, padding
 * with 00, and ends each row with a comma. The frame's data is the first LEN columns; the padding
 * is read past. Like SavvyCAN's loader, an ID above 0x7FF is a 29-bit id even when Extended says
 * false (files from faulty writers). The writer writes the current layout as SavvyCAN does,
 * padding included, so a classic capture written by canlab is the file SavvyCAN would write.
 *
 * What the layout cannot say, and what canlab does about it (documented in docs/formats.md):
 * - CAN FD frames with more than 8 bytes are written with LEN = the byte count (12..64) and that
 *   many data columns, more than the header names; rows with LEN > 8 read back as CAN FD frames
 *   (valid FD lengths only). The BRS and ESI flags are lost, and an FD frame of at most 8 bytes
 *   reads back as a classic frame.
 * - Remote frames are written as zero-length data frames (LEN 0): the remote flag and DLC are lost.
 * - Classic DLCs 9..15 are written as LEN 8 and read back as DLC 8.
 * - Error frames are written SocketCAN-style, with the CAN_ERR_FLAG bit 0x20000000 set in the ID
 *   and Extended true; a row whose ID carries that bit reads back as an error frame (its
 *   extended flag is lost; ids keep the error-class bits).
 * - A frame without a direction is written as Rx.
 */
import { lengthToDlc, type CanFrame } from '../frame';
import {
  checkFrame,
  flatten,
  headLines,
  hex2,
  hexPad,
  lineError,
  parseDec,
  parseHex,
  readLineBatches,
  TextSink,
  type CaptureWriter,
  type LineAt,
  type LineFormat,
} from './common';

export const GVRET_HEADER = 'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8';
const CAN_ERR_FLAG = 0x20000000;
const FD_LENGTH_OK = new Set([12, 16, 20, 24, 32, 48, 64]);

/** The two header starts SavvyCAN has written: with a Dir column (current) and without (older). */
const WITH_DIR = 'time stamp,id,extended,dir,bus,len';
const WITHOUT_DIR = 'time stamp,id,extended,bus,len';

function layoutOf(header: string): 'dir' | 'nodir' | undefined {
  const head = header
    .split(',')
    .map((s) => s.trim().toLowerCase())
    .join(',');
  if (head.startsWith(WITH_DIR)) return 'dir';
  if (head.startsWith(WITHOUT_DIR)) return 'nodir';
  return undefined;
}

/** A GVRET CSV starts with SavvyCAN's header, in either layout. */
export function sniffGvret(head: Buffer): boolean {
  const first = headLines(head, 1)[0];
  return first !== undefined && layoutOf(first) !== undefined;
}

interface GvretState {
  layout: 'dir' | 'nodir' | undefined;
}

const GVRET: LineFormat<GvretState> = {
  start: () => ({ layout: undefined }),
  parse(line, at, st) {
    if (st.layout === undefined) {
      st.layout = layoutOf(line);
      if (st.layout === undefined)
        throw lineError(
          at,
          'the first line must be SavvyCAN\'s header, "Time Stamp,ID,Extended,Dir,Bus,LEN,…" or "Time Stamp,ID,Extended,Bus,LEN,…"',
        );
      return null;
    }
    return parseRow(line.split(','), st.layout === 'dir', at);
  },
  end(at, st) {
    if (st.layout === undefined)
      throw lineError({ ...at, line: 1 }, 'empty file: a GVRET CSV starts with a header line');
  },
};

/** Reads a GVRET CSV (either layout) as batches of frames. */
export function readCsvBatches(file: string): AsyncGenerator<CanFrame[]> {
  return readLineBatches(file, GVRET);
}

/** Reads a GVRET CSV frame by frame. */
export function readCsv(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCsvBatches(file));
}

function parseRow(f: string[], withDir: boolean, at: LineAt): CanFrame {
  const lenAt = withDir ? 5 : 4;
  if (f.length <= lenAt)
    throw lineError(
      at,
      `expected at least ${lenAt + 1} fields (${withDir ? 'Time Stamp,ID,Extended,Dir,Bus,LEN' : 'Time Stamp,ID,Extended,Bus,LEN'}), found ${f.length}`,
    );
  const tsTok = f[0]!.trim();
  const us = Number(tsTok);
  if (tsTok.length === 0 || !Number.isFinite(us)) throw lineError(at, `bad time stamp "${tsTok}"`);
  const idTok = f[1]!.trim();
  const rawId = parseHex(idTok.startsWith('0x') || idTok.startsWith('0X') ? idTok.slice(2) : idTok);
  if (Number.isNaN(rawId)) throw lineError(at, `bad ID "${idTok}"`);
  const extTok = f[2]!.trim().toLowerCase();
  if (extTok !== 'true' && extTok !== 'false')
    throw lineError(at, `Extended must be true or false, not "${f[2]!.trim()}"`);
  let direction: 'rx' | 'tx' | undefined;
  if (withDir) {
    const dirTok = f[3]!.trim().toLowerCase();
    if (dirTok !== 'rx' && dirTok !== 'tx')
      throw lineError(at, `Dir must be Rx or Tx, not "${f[3]!.trim()}"`);
    direction = dirTok;
  }
  const busTok = f[lenAt - 1]!.trim();
  const channel = parseDec(busTok);
  if (Number.isNaN(channel)) throw lineError(at, `bad Bus "${busTok}"`);
  const len = parseDec(f[lenAt]!.trim());
  if (Number.isNaN(len)) throw lineError(at, `bad LEN "${f[lenAt]!.trim()}"`);
  const error = (rawId & CAN_ERR_FLAG) !== 0 && rawId <= 0x3fffffff;
  const id = error ? rawId & 0x1fffffff : rawId;
  if (!error && id > 0x1fffffff) throw lineError(at, `ID ${idTok} is over 0x1FFFFFFF`);
  const extended = error ? false : extTok === 'true' || id > 0x7ff;
  const fd = len > 8;
  if (fd && !FD_LENGTH_OK.has(len))
    throw lineError(
      at,
      `LEN ${len} is neither a classic length (0-8) nor a CAN FD length (12, 16, 20, 24, 32, 48, 64)`,
    );
  let present = f.length - lenAt - 1;
  while (present > 0 && f[lenAt + present]!.trim() === '') present--;
  if (present < len) throw lineError(at, `frame ${idTok} has ${present} data bytes, its LEN says ${len}`);
  // SavvyCAN pads every row to D8; anything past that is not padding
  if (present > Math.max(len, 8))
    throw lineError(
      at,
      `frame ${idTok} has ${present} data columns, more than D8 and more than its LEN ${len}`,
    );
  const data = new Uint8Array(len);
  for (let k = 0; k < len; k++) {
    const tok = f[lenAt + 1 + k]!.trim();
    const v = parseHex(tok);
    if (Number.isNaN(v) || v > 255) throw lineError(at, `bad data byte "${tok}" in D${k + 1}`);
    data[k] = v;
  }
  const frame: CanFrame = {
    timestamp: us / 1e6,
    id,
    extended,
    remote: false,
    error,
    fd,
    brs: false,
    esi: false,
    dlc: lengthToDlc(len, fd),
    data,
    channel,
  };
  if (direction !== undefined) frame.direction = direction;
  return frame;
}

/** Formats one frame as a GVRET CSV row, SavvyCAN-style (see the module comment for what is lost). */
export function formatCsvRow(frame: CanFrame): string {
  const data = frame.remote ? new Uint8Array(0) : frame.data;
  const id = frame.error ? ((frame.id & 0x1fffffff) | CAN_ERR_FLAG) >>> 0 : frame.id;
  let row = `${Math.round(frame.timestamp * 1e6)},${hexPad(id, 8)},${frame.extended || frame.error ? 'true' : 'false'},${frame.direction === 'tx' ? 'Tx' : 'Rx'},${frame.channel},${data.length},`;
  for (let i = 0; i < data.length; i++) row += hex2(data[i]!) + ',';
  for (let i = data.length; i < 8; i++) row += '00,';
  return row;
}

/** Writes a GVRET CSV. */
export class CsvWriter implements CaptureWriter {
  private constructor(private readonly sink: TextSink) {}

  static async open(file: string): Promise<CsvWriter> {
    const sink = await TextSink.open(file);
    await sink.push(GVRET_HEADER + '\n');
    return new CsvWriter(sink);
  }

  async write(frame: CanFrame): Promise<void> {
    checkFrame(frame);
    if (frame.error && frame.data.length > 8)
      throw new RangeError('GVRET CSV error frames carry at most 8 data bytes');
    await this.sink.push(formatCsvRow(frame) + '\n');
  }

  close(): Promise<void> {
    return this.sink.close();
  }
}

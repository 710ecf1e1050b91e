/**
 * CSV in SavvyCAN's GVRET layout, read and write:
 *
 *     Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8
 *     1436509052249713,00000123,false,Rx,0,4,DE,AD,BE,EF,
 *
 * Time Stamp is in integer microseconds (1 µs resolution), ID 8 hex digits, Extended
 * true/false, Dir Rx/Tx, Bus the channel (SavvyCAN numbers buses from 0, as `CanFrame.channel`
 * does, so it is read and written unchanged), LEN the number of data bytes, then one hex column
 * per byte (SavvyCAN ends each row with a comma; the reader accepts either).
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
import { CanlabInputError } from '../errors';
import { lengthToDlc, type CanFrame } from '../frame';
import {
  BATCH_FRAMES,
  checkFrame,
  flatten,
  hex2,
  hexPad,
  parseDec,
  parseHex,
  textLines,
  TextSink,
  type CaptureWriter,
} from './common';

export const GVRET_HEADER = 'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8';
const CAN_ERR_FLAG = 0x20000000;
const FD_LENGTH_OK = new Set([12, 16, 20, 24, 32, 48, 64]);

/** Reads a GVRET CSV as batches of frames. */
export async function* readCsvBatches(file: string): AsyncGenerator<CanFrame[]> {
  let sawHeader = false;
  for await (const { lines, firstLine } of textLines(file)) {
    let out: CanFrame[] = [];
    for (let i = 0; i < lines.length; i++) {
      const where = `${file}:${firstLine + i}`;
      const line = lines[i]!.trim();
      if (!sawHeader) {
        const head = line
          .split(',')
          .slice(0, 6)
          .map((s) => s.trim().toLowerCase());
        if (head.join(',') !== 'time stamp,id,extended,dir,bus,len') {
          throw new CanlabInputError(
            where,
            `not a GVRET CSV: the first line must start with "Time Stamp,ID,Extended,Dir,Bus,LEN"`,
          );
        }
        sawHeader = true;
        continue;
      }
      if (line.length === 0) continue;
      out.push(parseRow(line, where));
      if (out.length === BATCH_FRAMES) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
  if (!sawHeader)
    throw new CanlabInputError(`${file}:1`, 'empty file: a GVRET CSV starts with a header line');
}

/** Reads a GVRET CSV frame by frame. */
export function readCsv(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readCsvBatches(file));
}

function parseRow(line: string, where: string): CanFrame {
  const f = line.split(',');
  if (f.length < 6)
    throw new CanlabInputError(
      where,
      `expected at least 6 fields (Time Stamp,ID,Extended,Dir,Bus,LEN), found ${f.length}`,
    );
  const tsTok = f[0]!.trim();
  const us = Number(tsTok);
  if (tsTok.length === 0 || !Number.isFinite(us))
    throw new CanlabInputError(where, `bad time stamp "${tsTok}"`);
  let idTok = f[1]!.trim();
  if (idTok.startsWith('0x') || idTok.startsWith('0X')) idTok = idTok.slice(2);
  const rawId = parseHex(idTok);
  if (Number.isNaN(rawId)) throw new CanlabInputError(where, `bad ID "${f[1]!.trim()}"`);
  const extTok = f[2]!.trim().toLowerCase();
  if (extTok !== 'true' && extTok !== 'false')
    throw new CanlabInputError(where, `Extended must be true or false, not "${f[2]!.trim()}"`);
  const dirTok = f[3]!.trim().toLowerCase();
  if (dirTok !== 'rx' && dirTok !== 'tx')
    throw new CanlabInputError(where, `Dir must be Rx or Tx, not "${f[3]!.trim()}"`);
  const channel = parseDec(f[4]!.trim());
  if (Number.isNaN(channel)) throw new CanlabInputError(where, `bad Bus "${f[4]!.trim()}"`);
  const len = parseDec(f[5]!.trim());
  if (Number.isNaN(len)) throw new CanlabInputError(where, `bad LEN "${f[5]!.trim()}"`);
  const error = (rawId & CAN_ERR_FLAG) !== 0 && rawId <= 0x3fffffff;
  const id = error ? rawId & 0x1fffffff : rawId;
  const extended = error ? false : extTok === 'true';
  if (!error && id > (extended ? 0x1fffffff : 0x7ff))
    throw new CanlabInputError(
      where,
      `ID ${f[1]!.trim()} is out of range for a ${extended ? 'extended' : 'standard'} id`,
    );
  const fd = len > 8;
  if (fd && !FD_LENGTH_OK.has(len))
    throw new CanlabInputError(
      where,
      `LEN ${len} is neither a classic length (0-8) nor a CAN FD length (12, 16, 20, 24, 32, 48, 64)`,
    );
  let present = f.length - 6;
  while (present > 0 && f[6 + present - 1]!.trim() === '') present--;
  if (present > len)
    throw new CanlabInputError(
      where,
      `frame ${f[1]!.trim()} has ${present} data bytes, more than its LEN ${len} allows`,
    );
  if (present < len)
    throw new CanlabInputError(where, `frame ${f[1]!.trim()} has ${present} data bytes, its LEN says ${len}`);
  const data = new Uint8Array(len);
  for (let k = 0; k < len; k++) {
    const tok = f[6 + k]!.trim();
    const v = parseHex(tok);
    if (Number.isNaN(v) || v > 255) throw new CanlabInputError(where, `bad data byte "${tok}" in D${k + 1}`);
    data[k] = v;
  }
  return {
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
    direction: dirTok === 'tx' ? 'tx' : 'rx',
  };
}

/** Formats one frame as a GVRET CSV row (see the module comment for what is lost). */
export function formatCsvRow(frame: CanFrame): string {
  const data = frame.remote ? new Uint8Array(0) : frame.data;
  const id = frame.error ? ((frame.id & 0x1fffffff) | CAN_ERR_FLAG) >>> 0 : frame.id;
  let row = `${Math.round(frame.timestamp * 1e6)},${hexPad(id, 8)},${frame.extended || frame.error ? 'true' : 'false'},${frame.direction === 'tx' ? 'Tx' : 'Rx'},${frame.channel},${data.length},`;
  for (let i = 0; i < data.length; i++) row += hex2(data[i]!) + ',';
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

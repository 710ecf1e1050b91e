/**
 * Vector ASC (ASCII log), read and write.
 *
 * Header lines: `date <weekday> <month> <day> <h:m:s.ms> [am|pm] <year>`, `base hex|dec
 * timestamps absolute|relative`, `internal events logged`, `// comment`, `Begin Triggerblock
 * <date>`, `End TriggerBlock`. Event lines start with a time in seconds (since the measurement
 * start with `timestamps absolute`, since the previous event with `timestamps relative`):
 *
 *     2.501000 2  C8              Tx   d 8 09 08 07 06 05 04 03 02   classic (id ends in x: extended)
 *     2.510001 2  100             Rx   r 8                          remote with DLC
 *     2.501000 1  ErrorFrame [...]                                  error frame
 *    30.005021 CANFD 2 Tx 1C4D80A7x [name] <brs> <esi> <dlc hex> <data length> <data...> <fields...>
 *    30.806898 CANFD 5 Tx ErrorFrame [...]
 *
 * Other events (statistics, status, J1939TP, ...) are skipped. With `base dec`, ids, DLCs and
 * data bytes are decimal. A CANFD line with data length 0 and a non-zero DLC is a remote frame.
 *
 * Timestamps: the reader returns absolute epoch seconds, the measurement start (the `Begin
 * Triggerblock` date, else the `date` line) plus the event time. ASC dates carry no time zone;
 * canlab reads and writes them as UTC so conversions are deterministic. An unparseable date, or
 * 1970-01-01, gives relative timestamps. The writer puts the first frame's time (truncated to the
 * millisecond) in the header when it looks like epoch time (≥ 1990), else 1970-01-01 00:00:00, and
 * writes event times with 6 decimals: 1 µs resolution.
 *
 * Channels: Vector numbers them from 1, `CanFrame.channel` from 0 (python-can's convention), so the
 * reader subtracts 1 and the writer adds 1 (a stored 0, which Vector never writes, reads as 0
 * rather than -1). Error frames
 * keep only time, channel (and direction and the FD flag when written as a CANFD line); their
 * id, DLC and data are not recorded. Classic lines always say Rx or Tx: a frame without a
 * direction is written as Rx.
 */
import { CanlabInputError } from '../errors';
import { dlcToLength, type CanFrame } from '../frame';
import {
  BATCH_FRAMES,
  channelFromFile,
  channelToFile,
  checkFrame,
  flatten,
  hex2,
  hexBytes,
  parseDec,
  parseHex,
  textLines,
  TextSink,
  tokens,
  type CaptureWriter,
} from './common';

const EPOCH_1990 = 631152000;
const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  mär: 3,
  mrz: 3,
  'mã¤': 3,
  apr: 4,
  may: 5,
  mai: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  okt: 10,
  nov: 11,
  dec: 12,
  dez: 12,
};
const WEEKDAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTH_NAMES = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** Parses an ASC date (`Sat Sep 30 10:06:13.191 pm 2017`, German names too) as UTC epoch seconds; undefined when it is not one. */
export function parseAscDate(text: string): number | undefined {
  const t = text.trim().split(/\s+/);
  if (t.length < 5) return undefined;
  const month = MONTHS[t[1]!.toLowerCase().slice(0, 3)] ?? MONTHS[t[1]!.toLowerCase()];
  const day = parseDec(t[2]!);
  const time = /^(\d{1,2}):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$/.exec(t[3]!);
  if (month === undefined || Number.isNaN(day) || time === null) return undefined;
  let yearToken = t[4]!;
  let ampm = '';
  if (/^(am|pm)$/i.test(yearToken)) {
    ampm = yearToken.toLowerCase();
    yearToken = t[5] ?? '';
  }
  const year = parseDec(yearToken);
  if (Number.isNaN(year)) return undefined;
  let hour = Number(time[1]);
  if (ampm === 'am' && hour === 12) hour = 0;
  else if (ampm === 'pm' && hour < 12) hour += 12;
  const frac = time[4] ?? '0';
  const ms = Number(frac) / 10 ** frac.length;
  return Date.UTC(year, month - 1, day, hour, Number(time[2]), Number(time[3])) / 1000 + ms;
}

/** Formats epoch seconds as an ASC date in UTC with milliseconds, e.g. `Sat Sep 30 10:06:13.191 pm 2017`. */
export function formatAscDate(epoch: number): string {
  const d = new Date(Math.round(epoch * 1000));
  const h = d.getUTCHours();
  const h12 = h % 12 === 0 ? 12 : h % 12;
  const two = (n: number): string => String(n).padStart(2, '0');
  return `${WEEKDAYS[d.getUTCDay()]} ${MONTH_NAMES[d.getUTCMonth()]} ${two(d.getUTCDate())} ${two(h12)}:${two(d.getUTCMinutes())}:${two(d.getUTCSeconds())}.${String(d.getUTCMilliseconds()).padStart(3, '0')} ${h < 12 ? 'am' : 'pm'} ${d.getUTCFullYear()}`;
}

const isDirection = (t: string | undefined): boolean =>
  t === 'Rx' || t === 'Tx' || t === 'rx' || t === 'tx' || t === 'TxRq';

/** Reads an ASC file as batches of frames. */
export async function* readAscBatches(file: string): AsyncGenerator<CanFrame[]> {
  let hex = true;
  let relative = false;
  let dateStart: number | undefined;
  let triggerStart: number | undefined;
  let previous = 0;
  for await (const { lines, firstLine } of textLines(file)) {
    let out: CanFrame[] = [];
    for (let i = 0; i < lines.length; i++) {
      const lineNo = firstLine + i;
      const where = `${file}:${lineNo}`;
      const line = lines[i]!.trim();
      if (line.length === 0) continue;
      const c = line.charCodeAt(0);
      if (!(c >= 48 && c <= 57) && c !== 45 /* - */) {
        const lower = line.toLowerCase();
        if (lower.startsWith('date ')) {
          dateStart = parseAscDate(line.slice(5));
        } else if (lower.startsWith('base ')) {
          const t = lower.split(/\s+/);
          if (t[1] !== 'hex' && t[1] !== 'dec')
            throw new CanlabInputError(where, `unknown number base "${t[1] ?? ''}", expected hex or dec`);
          hex = t[1] === 'hex';
          if (t[2] === 'timestamps') {
            if (t[3] !== 'absolute' && t[3] !== 'relative')
              throw new CanlabInputError(
                where,
                `unknown timestamp mode "${t[3] ?? ''}", expected absolute or relative`,
              );
            relative = t[3] === 'relative';
          }
        } else if (lower.startsWith('begin triggerblock')) {
          triggerStart = parseAscDate(line.slice('begin triggerblock'.length));
        }
        continue; // other header lines, comments, End TriggerBlock
      }
      const t = tokens(line);
      const offset = Number(t[0]);
      if (!Number.isFinite(offset)) throw new CanlabInputError(where, `bad timestamp "${t[0]!}"`);
      const eventTime = relative ? previous + offset : offset;
      previous = eventTime;
      const start = triggerStart ?? dateStart ?? 0;
      const frame = parseEvent(t, start + eventTime, hex, where);
      if (frame !== null) out.push(frame);
      if (out.length === BATCH_FRAMES) {
        yield out;
        out = [];
      }
    }
    if (out.length > 0) yield out;
  }
}

/** Reads an ASC file frame by frame. */
export function readAsc(file: string): AsyncIterableIterator<CanFrame> {
  return flatten(readAscBatches(file));
}

function parseNum(token: string | undefined, hex: boolean): number {
  if (token === undefined) return NaN;
  return hex ? parseHex(token) : parseDec(token);
}

function parseId(token: string, hex: boolean, where: string): { id: number; extended: boolean } {
  const last = token.charCodeAt(token.length - 1) | 0x20;
  const extended = last === 120; /* x */
  const id = parseNum(extended ? token.slice(0, -1) : token, hex);
  if (Number.isNaN(id)) throw new CanlabInputError(where, `bad CAN id "${token}"`);
  if (extended && id > 0x1fffffff)
    throw new CanlabInputError(where, `extended id ${token} is over 0x1FFFFFFF`);
  if (!extended && id > 0x7ff)
    throw new CanlabInputError(where, `standard id ${token} is over 0x7FF (extended ids end in "x")`);
  return { id, extended };
}

function parseData(
  t: string[],
  from: number,
  count: number,
  hex: boolean,
  where: string,
  what: string,
): Uint8Array {
  const data = new Uint8Array(count);
  for (let k = 0; k < count; k++) {
    const tok = t[from + k];
    if (tok === undefined)
      throw new CanlabInputError(where, `${what} has ${k} data bytes, its length says ${count}`);
    const v = parseNum(tok, hex);
    if (Number.isNaN(v) || v > 255) throw new CanlabInputError(where, `bad data byte "${tok}"`);
    data[k] = v;
  }
  return data;
}

function errorFrame(
  timestamp: number,
  channel: number,
  fd: boolean,
  direction: 'rx' | 'tx' | undefined,
): CanFrame {
  const f: CanFrame = {
    timestamp,
    id: 0,
    extended: false,
    remote: false,
    error: true,
    fd,
    brs: false,
    esi: false,
    dlc: 0,
    data: new Uint8Array(0),
    channel,
  };
  if (direction !== undefined) f.direction = direction;
  return f;
}

function parseEvent(t: string[], timestamp: number, hex: boolean, where: string): CanFrame | null {
  const kind = t[1];
  if (kind === undefined) return null;
  if (kind === 'CANFD') {
    const stored = parseDec(t[2] ?? '');
    if (Number.isNaN(stored)) throw new CanlabInputError(where, `bad CANFD channel "${t[2] ?? ''}"`);
    const channel = channelFromFile(stored);
    const dirTok = t[3];
    if (!isDirection(dirTok))
      throw new CanlabInputError(where, `expected Rx or Tx after the CANFD channel, not "${dirTok ?? ''}"`);
    const direction = dirTok!.toLowerCase() === 'rx' ? 'rx' : 'tx';
    const idTok = t[4];
    if (idTok === undefined) throw new CanlabInputError(where, 'CANFD line ends before the id');
    if (idTok.toLowerCase() === 'errorframe') return errorFrame(timestamp, channel, true, direction);
    const { id, extended } = parseId(idTok, hex, where);
    // an optional symbolic name sits between the id and the BRS/ESI flags
    let k = 5;
    const isBit = (s: string | undefined): boolean => s === '0' || s === '1';
    if (!(isBit(t[k]) && isBit(t[k + 1]))) k++;
    if (!(isBit(t[k]) && isBit(t[k + 1])))
      throw new CanlabInputError(where, 'CANFD line needs BRS and ESI flags (0 or 1) after the id');
    const brs = t[k] === '1';
    const esi = t[k + 1] === '1';
    const dlc = parseNum(t[k + 2], true);
    if (Number.isNaN(dlc) || dlc > 15) throw new CanlabInputError(where, `bad CANFD DLC "${t[k + 2] ?? ''}"`);
    const length = parseDec(t[k + 3] ?? '');
    if (Number.isNaN(length)) throw new CanlabInputError(where, `bad CANFD data length "${t[k + 3] ?? ''}"`);
    const frame: CanFrame = {
      timestamp,
      id,
      extended,
      remote: false,
      error: false,
      fd: true,
      brs,
      esi,
      dlc,
      data: new Uint8Array(0),
      channel,
      direction,
    };
    if (length === 0 && dlc > 0) {
      frame.remote = true;
      return frame;
    }
    if (length !== dlcToLength(dlc, true)) {
      throw new CanlabInputError(
        where,
        `CANFD frame ${idTok} has data length ${length} but DLC ${t[k + 2]!} means ${dlcToLength(dlc, true)} bytes`,
      );
    }
    frame.data = parseData(t, k + 4, length, hex, where, `CANFD frame ${idTok}`);
    return frame;
  }
  const stored = parseDec(kind);
  if (Number.isNaN(stored)) return null; // CAN status lines, Start of measurement, ...
  const channel = channelFromFile(stored);
  const second = t[2];
  if (second === undefined) return null;
  if (second.toLowerCase() === 'errorframe') return errorFrame(timestamp, channel, false, undefined);
  // `<id> <dir> d|r ...`, or `<id> <name> <dir> d|r ...`
  let k = 3;
  if (!isDirection(t[k])) {
    if (isDirection(t[k + 1]) && (t[k + 2] === 'd' || t[k + 2] === 'r')) k++;
    else return null; // Statistic, J1939TP and other events
  }
  const { id, extended } = parseId(second, hex, where);
  const direction = t[k]!.toLowerCase() === 'rx' ? 'rx' : 'tx';
  const type = t[k + 1];
  if (type === 'r' || type === 'R') {
    const d = t[k + 2];
    let dlc = 0;
    if (d !== undefined && d.length <= 2) {
      const v = parseNum(d, hex);
      if (!Number.isNaN(v)) {
        if (v > 15) throw new CanlabInputError(where, `remote frame ${second} has DLC ${d}, over 15`);
        dlc = v;
      }
    }
    return {
      timestamp,
      id,
      extended,
      remote: true,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc,
      data: new Uint8Array(0),
      channel,
      direction,
    };
  }
  if (type !== 'd' && type !== 'D')
    throw new CanlabInputError(where, `expected "d" or "r" after the direction, not "${type ?? ''}"`);
  const dlc = parseNum(t[k + 2], hex);
  if (Number.isNaN(dlc) || dlc > 15)
    throw new CanlabInputError(where, `bad DLC "${t[k + 2] ?? ''}" for frame ${second}`);
  const length = dlcToLength(dlc, false);
  const data = parseData(t, k + 3, length, hex, where, `frame ${second}`);
  const extra = t[k + 3 + length];
  if (extra !== undefined && extra.length === 2 && !Number.isNaN(parseNum(extra, hex))) {
    throw new CanlabInputError(
      where,
      `frame ${second} has more data bytes than its DLC ${t[k + 2]!} allows (${length})`,
    );
  }
  return {
    timestamp,
    id,
    extended,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc,
    data,
    channel,
    direction,
  };
}

function formatId(frame: CanFrame): string {
  return frame.id.toString(16).toUpperCase() + (frame.extended ? 'x' : '');
}

/** Writes ASC (`base hex timestamps absolute`), python-can/Vector style. */
export class AscWriter implements CaptureWriter {
  private start: number | undefined;
  private closed = false;

  private constructor(private readonly sink: TextSink) {}

  static async open(file: string): Promise<AscWriter> {
    return new AscWriter(await TextSink.open(file));
  }

  private header(start: number): string {
    const date = formatAscDate(start);
    return `date ${date}\nbase hex  timestamps absolute\ninternal events logged\n// version 9.0.0\nBegin Triggerblock ${date}\n   0.000000 Start of measurement\n`;
  }

  async write(frame: CanFrame): Promise<void> {
    if (this.closed) throw new Error('ASC writer is closed');
    checkFrame(frame);
    let text = '';
    if (this.start === undefined) {
      this.start = frame.timestamp >= EPOCH_1990 ? Math.floor(frame.timestamp * 1000) / 1000 : 0;
      text += this.header(this.start);
    }
    const time = (frame.timestamp - this.start).toFixed(6).padStart(11, ' ');
    const dir = frame.direction === 'tx' ? 'Tx' : 'Rx';
    const channel = channelToFile(frame.channel);
    if (frame.error) {
      text += frame.fd
        ? `${time} CANFD ${String(channel).padStart(3)} ${dir.padEnd(4)} ErrorFrame\n`
        : `${time} ${channel}  ErrorFrame\n`;
    } else if (frame.fd) {
      const length = frame.remote ? 0 : frame.data.length;
      if (frame.remote && frame.dlc === 0)
        throw new RangeError(
          `ASC cannot record a CAN FD remote frame with DLC 0 (frame 0x${frame.id.toString(16)})`,
        );
      const flags = (1 << 12) | (frame.brs ? 1 << 13 : 0) | (frame.esi ? 1 << 14 : 0);
      const data = length > 0 ? hexBytes(frame.data, ' ') + ' ' : '';
      text +=
        `${time} CANFD ${String(channel).padStart(3)} ${dir.padEnd(4)} ${formatId(frame).padStart(8)}  ${''.padStart(32)} ` +
        `${frame.brs ? 1 : 0} ${frame.esi ? 1 : 0} ${frame.dlc.toString(16)} ${String(length).padStart(2)} ${data}` +
        `${'0'.padStart(8)} ${'0'.padStart(4)} ${flags.toString(16).toUpperCase().padStart(8)} ${'0'.padStart(8)} ${'0'.padStart(8)} ${'0'.padStart(8)} ${'0'.padStart(8)} ${'0'.padStart(8)}\n`;
    } else if (frame.remote) {
      text += `${time} ${channel}  ${formatId(frame).padEnd(15)} ${dir.padEnd(4)} r ${frame.dlc.toString(16)}\n`;
    } else {
      let data = '';
      for (let i = 0; i < frame.data.length; i++) data += ' ' + hex2(frame.data[i]!);
      text += `${time} ${channel}  ${formatId(frame).padEnd(15)} ${dir.padEnd(4)} d ${frame.dlc.toString(16)}${data}\n`;
    }
    await this.sink.push(text);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.start === undefined) await this.sink.push(this.header(0));
    await this.sink.push('End TriggerBlock\n');
    await this.sink.close();
  }
}

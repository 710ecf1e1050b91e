/**
 * The readers added for the files analysts have: each reads files its owning tool wrote (SavvyCAN's
 * own example capture in three of its formats, python-can's TRC writer, PEAK's published examples)
 * or faithful reconstructions of the owner's layout (written by tools/formats_fixtures.py), and
 * every frame is compared.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createCaptureWriter, detectCaptureFormat, readCapture } from '../../src/formats';
import type { CanFrame } from '../../src/frame';
import { sniffCabana } from '../../src/formats/cabana';
import { sniffCanHacker } from '../../src/formats/canhacker';
import { sniffClx000 } from '../../src/formats/clx000';
import { sniffGvret } from '../../src/formats/csv';
import { sniffGenericCsv } from '../../src/formats/generic-csv';
import { sniffKvaserDec, sniffKvaserHex } from '../../src/formats/kvaser';
import { sniffLawicel } from '../../src/formats/lawicel';
import { sniffMicrochip } from '../../src/formats/microchip';
import { sniffTrc } from '../../src/formats/trc';
import { collect, tempDir } from './helpers';
import { expectSniffClaims } from './sniff-corpus';

const FIXTURES = path.resolve(__dirname, '../fixtures/formats');
const fx = (...p: string[]): string => path.join(FIXTURES, ...p);
const hex = (f: CanFrame): string => Buffer.from(f.data).toString('hex');
const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** The fields of a frame a layout records, as the JSON beside a generated fixture spells them. */
interface Expected {
  timestamp?: number;
  id: number;
  extended: boolean;
  remote?: boolean;
  fd?: boolean;
  brs?: boolean;
  dlc: number;
  data: string;
  channel?: number;
  direction?: 'rx' | 'tx';
}

function expectFrames(
  actual: CanFrame[],
  expected: Expected[],
  time: (e: Expected) => number | undefined,
  tolerance: number,
): void {
  expect(actual).toHaveLength(expected.length);
  expected.forEach((e, i) => {
    const a = actual[i]!;
    const { timestamp: _t, ...rest } = e;
    const got: Record<string, unknown> = { i, data: hex(a) };
    for (const key of Object.keys(rest)) if (key !== 'data') got[key] = a[key as keyof CanFrame];
    expect(got).toEqual({ i, ...rest });
    const want = time(e);
    if (want !== undefined && Math.abs(a.timestamp - want) > tolerance)
      throw new Error(`frame ${i}: timestamp ${a.timestamp} is not ${want} ± ${tolerance}`);
  });
}

describe("SavvyCAN's example capture, as SavvyCAN wrote it in three formats", () => {
  // the first 43 rows of SavvyCAN's examples/GVRET_Log.csv, MicrochipLog.log and GenericID_Log.csv
  let gvret: CanFrame[];
  beforeAll(async () => {
    gvret = await collect(readCapture(fx('savvycan', 'GVRET_Log.csv')));
  });

  test('the older GVRET layout (no Dir column), padded to D8: the data is the first LEN columns', async () => {
    expect(gvret).toHaveLength(43);
    const rows = readFileSync(fx('savvycan', 'GVRET_Log.csv'), 'latin1').trim().split('\n').slice(1);
    const padded = rows.filter((r) => Number(r.split(',')[4]) < 8);
    expect(padded.length).toBeGreaterThan(10);
    rows.forEach((row, i) => {
      const cols = row.split(',');
      expect(cols).toHaveLength(14); // 5 fields, D1..D8 and the trailing comma
      const f = gvret[i]!;
      expect(f.dlc).toBe(Number(cols[4]));
      expect(hex(f)).toBe(
        cols
          .slice(5, 5 + f.dlc)
          .join('')
          .toLowerCase(),
      );
      expect({ id: f.id, extended: f.extended, channel: f.channel, direction: f.direction }).toEqual({
        id: parseInt(cols[1]!, 16),
        extended: false,
        channel: 0,
        direction: undefined,
      });
      expect(f.timestamp).toBeCloseTo(Number(cols[0]) / 1e6, 9);
    });
    expect(gvret.find((f) => f.id === 0x228)).toMatchObject({ dlc: 4 });
    expect(hex(gvret.find((f) => f.id === 0x228)!)).toBe('40c030f8');
  });

  test('the Microchip log holds the same frames, times in ms, direction RX', async () => {
    const micro = await collect(readCapture(fx('savvycan', 'MicrochipLog.log')));
    expect(micro.map((f) => [f.id, f.extended, f.dlc, hex(f), f.channel])).toEqual(
      gvret.map((f) => [f.id, f.extended, f.dlc, hex(f), f.channel]),
    );
    micro.forEach((f, i) => expect(f.timestamp).toBeCloseTo(gvret[i]!.timestamp, 9));
    expect(new Set(micro.map((f) => f.direction))).toEqual(new Set(['rx']));
  });

  test('the generic ID,data CSV holds the same ids and bytes, spaced 5 ms as SavvyCAN spaces them', async () => {
    const generic = await collect(readCapture(fx('savvycan', 'GenericID_Log.csv')));
    expect(generic.map((f) => [f.id, f.extended, f.dlc, hex(f)])).toEqual(
      gvret.map((f) => [f.id, f.extended, f.dlc, hex(f)]),
    );
    generic.forEach((f, i) => expect(f.timestamp).toBeCloseTo(i * 0.005, 9));
  });
});

describe('GVRET CSV, current layout (Dir column), as saveNativeCSVFile writes it', () => {
  const file = fx('reconstructed', 'gvret_current.csv');

  test('every frame, Tx and bus 1 included', async () => {
    const expected = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as Expected[];
    expectFrames(await collect(readCapture(file)), expected, (e) => e.timestamp, 1e-9);
  });

  test("canlab's writer writes the same bytes as SavvyCAN's, padding included", async () => {
    const frames = await collect(readCapture(file));
    const out = tmp.file('gvret-again.csv');
    const w = createCaptureWriter(out);
    for (const f of frames) await w.write(f);
    await w.close();
    expect(readFileSync(out, 'latin1')).toBe(readFileSync(file, 'latin1'));
  });
});

describe('PEAK TRC written by python-can (TRCWriter: versions 1.0 and 2.1)', () => {
  interface Written {
    timestamp: number;
    id: number;
    extended: boolean;
    dlc: number;
    data: string;
    channel: number;
    rx: boolean;
  }
  const load = (name: string): { written: Written[]; python_can_reads: Written[] } =>
    JSON.parse(readFileSync(fx('python-can', `${name}.json`), 'utf8')) as {
      written: Written[];
      python_can_reads: Written[];
    };

  test('2.1: absolute times, bus N as channel N - 1, direction', async () => {
    const { written, python_can_reads } = load('v2_1.trc');
    const frames = await collect(readCapture(fx('python-can', 'v2_1.trc')));
    expectFrames(
      frames,
      written.map((m) => ({ ...m, direction: m.rx ? 'rx' : 'tx', rx: undefined }) as Expected),
      (e) => e.timestamp,
      2e-6,
    );
    // python-can numbers the bus as written (1-based); canlab counts from 0
    expect(frames.map((f) => f.channel + 1)).toEqual(python_can_reads.map((m) => m.channel));
  });

  test('1.0: no start time, so times are the offsets (whole ms); no bus, no direction', async () => {
    const { written } = load('v1_0.trc');
    const frames = await collect(readCapture(fx('python-can', 'v1_0.trc')));
    const t0 = written[0]!.timestamp;
    expectFrames(
      frames,
      written.map((m) => ({
        id: m.id,
        extended: m.extended,
        dlc: m.dlc,
        data: m.data,
        timestamp: m.timestamp - t0,
      })),
      (e) => e.timestamp,
      0.0005 + 1e-9,
    );
    expect(new Set(frames.map((f) => `${f.channel}/${String(f.direction)}`))).toEqual(
      new Set(['0/undefined']),
    );
  });
});

describe("PEAK's published TRC examples, every version (PEAK_CAN_TRC_File_Format)", () => {
  /** Days since 1899-12-30 (OLE date) to epoch seconds. */
  const ole = (days: number): number => (days - 25569) * 86400;
  const std = (id: number, dlc: number, data: string, extra: Partial<CanFrame> = {}): Partial<CanFrame> => ({
    id,
    extended: false,
    dlc,
    data: Buffer.from(data, 'hex'),
    ...extra,
  });
  const v1 = [
    std(0x300, 7, '00000000040000', { direction: 'rx' }),
    std(0x300, 7, '00000000040000', { direction: 'rx' }),
    std(0x400, 2, '0000', { direction: 'tx' }),
    std(0x300, 7, '00000000060000', { direction: 'rx' }),
    std(0x008, 4, '00190808', { error: true, direction: 'rx' }),
    std(0x100, 3, '', { remote: true, direction: 'rx' }),
  ];
  const v1Times = [1059.9, 1283.2, 1298.9, 1323.0, 1349.2, 1352.7];
  const v1xTimes = [1059.9, 1283.231, 1298.945, 1323.201, 1349.222, 1352.743];

  async function check(
    name: string,
    want: Partial<CanFrame>[],
    times: number[],
    start: number,
  ): Promise<void> {
    const frames = await collect(readCapture(fx('peak', name)));
    expect(frames).toHaveLength(want.length);
    frames.forEach((f, i) => {
      expect({ i, ...f, timestamp: undefined }).toMatchObject({ i, ...want[i] });
      expect(f.timestamp).toBeCloseTo(start + times[i]! / 1000, 5);
    });
  }

  test('1.0: ERROR data, the FFFFFFFF bus-light line skipped, RTR', async () => {
    await check(
      'v1_0.trc',
      [
        std(1, 8, '0000000000000000'),
        std(8, 4, '00190808', { error: true }),
        std(0x100, 3, '', { remote: true }),
      ],
      [1841, 1842, 1844],
      0,
    );
  });
  test('1.1: Rx/Tx/Error/RTR, the Warng line skipped', () =>
    check('v1_1.trc', v1, v1Times, ole(37704.5364870833)));
  test('1.2: a Bus column, and the start time with its stray ";"', () =>
    check('v1_2.trc', v1, v1xTimes, ole(39878.6772258947)));
  test('1.3: the reserved column', () => check('v1_3.trc', v1, v1xTimes, ole(40023.5245451516)));

  const v2 = (fdDlc: number): Partial<CanFrame>[] => [
    ...v1.slice(0, 4).map((f) => ({ ...f, channel: 0 })),
    std(0x500, fdDlc, '0102030405060708090a0b0c', { fd: true, direction: 'tx' }),
  ];
  const tail = [
    { ...std(0x18efc034, 8, '0102030405060708', { direction: 'tx' }), extended: true },
    std(0x100, 3, '', { remote: true, direction: 'rx' }),
  ];
  test('2.0: $COLUMNS with a data length (l), an error frame without id or length, ST and EC skipped', () =>
    check(
      'v2_0.trc',
      [...v2(9), std(0, 5, '0400020000', { error: true, direction: 'rx' }), ...tail],
      [1059.9, 1283.231, 1298.945, 1323.201, 1334.416, 1334.522, 1335.156, 1336.543],
      ole(42209.4075997106),
    ));
  test('2.1: the DLC column (L), error frames with "-" as id, EV ST EC skipped', () =>
    check(
      'v2_1.trc',
      [...v2(9), std(0, 5, '0400020000', { error: true }), std(0, 5, '0400020800', { error: true }), ...tail],
      [1059.9, 1283.231, 1298.945, 1323.201, 1334.416, 1334.222, 1334.268, 1335.156, 1336.543],
      ole(41766.4648963872),
    ));
});

describe('reconstructed layouts (tools/formats_fixtures.py), every frame', () => {
  const minuteOf = (e: Expected): number => e.timestamp! % 60;
  test.each<[string, string, (e: Expected) => number | undefined, number]>([
    ['kvaser_hex.txt', 'Kvaser text (hex)', (e) => e.timestamp, 1e-9],
    ['kvaser_dec.txt', 'Kvaser text (decimal)', (e) => e.timestamp, 1e-9],
    ['clx000.txt', 'CLX000 log', (e) => e.timestamp, 1e-6],
    ['canhacker.trc', 'CANHacker trace', minuteOf, 0.0005 + 1e-9],
    ['lawicel.log', 'Lawicel/SLCAN log', minuteOf, 0.0005 + 1e-9],
    ['cabana.csv', 'cabana CSV', (e) => e.timestamp, 0.0005 + 1e-9],
    ['cabana_web.csv', 'cabana CSV', (e) => e.timestamp, 1e-9],
  ])('%s reads as %s', async (name, format, time, tolerance) => {
    const file = fx('reconstructed', name);
    expect((await detectCaptureFormat(file)).name).toBe(format);
    const expected = JSON.parse(readFileSync(`${file}.json`, 'utf8')) as Expected[];
    expectFrames(await collect(readCapture(file)), expected, time, tolerance);
  });
});

describe('clocks that wrap and logs without times', () => {
  const read = async (name: string, text: string): Promise<CanFrame[]> => {
    const file = tmp.file(name);
    writeFileSync(file, text, 'latin1');
    return collect(readCapture(file));
  };

  test('CANHacker counts seconds within the minute: a step back is the next minute', async () => {
    const frames = await read(
      'wrap.trc',
      'Time   ID     DLC Data                    Comment\n59.990 100 1 01\n00,010 100 1 02 a comment\n30.000 100 0\n',
    );
    expect(frames.map((f) => f.timestamp)).toEqual([59.99, 60.01, 90]);
  });

  test('Lawicel: milliseconds wrap at 60000; without timestamps frames are 100 µs apart', async () => {
    const timed = await read('wrap.log', 't1000EA5F\rt1000000A\rZ\rt1000EA5F\r');
    expect(timed.map((f) => f.timestamp)).toEqual([59.999, 60.01, 119.999]);
    const untimed = await read('untimed.log', 't100101\nt100102\nt100103\nz\n');
    expect(untimed.map((f) => f.timestamp)).toEqual([0, 0.0001, 0.0002]);
  });
});

describe('errors name the format and the line', () => {
  const failure = async (name: string, text: string): Promise<string> => {
    const file = tmp.file(name);
    writeFileSync(file, text, 'latin1');
    try {
      await collect(readCapture(file));
    } catch (err) {
      return `${(err as { where: string }).where.slice(file.length)} ${(err as Error).message}`;
    }
    throw new Error(`${name} was accepted`);
  };

  test.each([
    [
      'bad.csv',
      'Time Stamp,ID,Extended,Bus,LEN,D1\n1,00000001,false,0,2,01\n',
      ':2 GVRET CSV: frame 00000001 has 1 data bytes, its LEN says 2',
    ],
    [
      'bad.log',
      '//--\nMicrochip Technology Inc.\n//--\n1;RX;0x100;2;0x01;0xZZ;\n',
      ':4 Microchip CAN BUS Analyzer log: bad data byte "0xZZ"',
    ],
    [
      'bad2.csv',
      'time,addr,bus,data\n1.0,0x100,0,0x0\n',
      ':2 cabana CSV: data "0x0" is not a run of hex byte pairs',
    ],
    [
      'bad.txt',
      '# Logger type: CL1000\n# Time: 20200101T000000\n# Value separator: ";"\nTimestamp;Type;ID;Data\n000;5;100;00\n',
      ':5 CLX000 log: unknown Type "5" (0, 1, 8 or 9)',
    ],
    [
      'bad2.log',
      't1000\rt1000\rt1000\rt10020\r',
      ':4 Lawicel/SLCAN log: "t10020" is not a well-formed t message (id, DLC, data, optional 4-digit timestamp)',
    ],
    [
      'bad3.csv',
      'ID,Data Bytes\n100,01 02\n101,\n102,03\n200,01 0G\n',
      ':5 generic ID,data CSV: bad data byte "0G"',
    ],
  ])('%s', async (name, text, message) => {
    expect(await failure(name, text)).toBe(message);
  });

  test('a file no reader claims is read by the reader of its extension, whose error names the line', async () => {
    expect(await failure('nothing.trc', 'hello\n')).toBe(
      ':1 PCAN TRC: expected a message number like "1)", not "hello"',
    );
  });
});

describe('content decides, the extension only breaks ties', () => {
  test.each([
    ['savvycan/GVRET_Log.csv', 'GVRET CSV'],
    ['savvycan/MicrochipLog.log', 'Microchip CAN BUS Analyzer log'],
    ['savvycan/GenericID_Log.csv', 'generic ID,data CSV'],
    ['peak/v2_0.trc', 'PCAN TRC'],
    ['reconstructed/canhacker.trc', 'CANHacker trace'],
    ['reconstructed/lawicel.log', 'Lawicel/SLCAN log'],
  ])('%s under any name is %s', async (name, format) => {
    const copy = tmp.file(`renamed-${path.basename(name)}.dat`);
    writeFileSync(copy, readFileSync(fx(name)));
    expect((await detectCaptureFormat(copy)).name).toBe(format);
    expect((await collect(readCapture(copy))).length).toBeGreaterThan(0);
  });
});

describe('each content test claims its own files and no other fixture', () => {
  const named = (re: RegExp) => (file: string) => re.test(path.relative(FIXTURES, file));
  test.each<[string, (head: Buffer) => boolean, (file: string) => boolean]>([
    ['GVRET CSV', sniffGvret, named(/^(savvycan\/GVRET_Log|reconstructed\/gvret_current)\.csv$/)],
    ['Microchip', sniffMicrochip, named(/^savvycan\/MicrochipLog\.log$/)],
    ['generic ID,data CSV', sniffGenericCsv, named(/^savvycan\/GenericID_Log\.csv$/)],
    ['cabana CSV', sniffCabana, named(/^reconstructed\/cabana(_web)?\.csv$/)],
    ['CLX000', sniffClx000, named(/^reconstructed\/clx000\.txt$/)],
    ['Kvaser hex', sniffKvaserHex, named(/^reconstructed\/kvaser_hex\.txt$/)],
    ['Kvaser decimal', sniffKvaserDec, named(/^reconstructed\/kvaser_dec\.txt$/)],
    ['CANHacker', sniffCanHacker, named(/^reconstructed\/canhacker\.trc$/)],
    ['Lawicel/SLCAN', sniffLawicel, named(/^reconstructed\/lawicel\.log$/)],
    ['PCAN TRC', sniffTrc, (file) => /\.trc$/.test(file) && !file.endsWith('canhacker.trc')],
  ])('%s', async (_name, sniff, own) => {
    await expectSniffClaims(sniff, own);
  });
});

/** Hand-written snippets of each text format, including the less common forms. */
import { writeFileSync } from 'node:fs';
import { readCapture } from '../../src/formats';
import { formatAscDate, parseAscDate } from '../../src/formats/asc';
import { lineChunks } from '../../src/formats/common';
import type { CanFrame } from '../../src/frame';
import { collect, tempDir } from './helpers';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;
function write(ext: string, text: string): string {
  const file = tmp.file(`p${n++}.${ext}`);
  writeFileSync(file, text, 'latin1');
  return file;
}
const read = (ext: string, text: string): Promise<CanFrame[]> => collect(readCapture(write(ext, text)));
const hex = (f: CanFrame): string => Buffer.from(f.data).toString('hex');

describe('candump .log', () => {
  test('every frame form can-utils writes', async () => {
    const frames = await read(
      'log',
      [
        '(1436509052.249713) vcan0 123#DEADBEEF',
        '(1436509052.249714) vcan0 12345678#',
        '(1436509052.249715) can1 123#R',
        '(1436509052.249716) can1 1ABCDEF0#R5',
        '(1436509052.249717) can1 7FF#1122334455667788_C',
        '(1436509052.249718) can2 123##5' + '00'.repeat(12),
        '(1436509052.249719) can2 123##2' + 'ab'.repeat(64),
        '(1436509052.249720) can0 20000080#0000000000000000',
        '(1436509052.249721) can0 123#11.22.33 T',
        '(1436509052.249722) can0 123#44 R',
        '',
        '(1436509052.249723) slcan 001#00\r',
      ].join('\n') + '\n',
    );
    expect(frames).toHaveLength(11);
    expect(frames[0]).toMatchObject({ id: 0x123, extended: false, dlc: 4, channel: 0, fd: false });
    expect(frames[0]!.timestamp).toBeCloseTo(1436509052.249713, 6);
    expect(hex(frames[0]!)).toBe('deadbeef');
    expect(frames[1]).toMatchObject({ id: 0x12345678, extended: true, dlc: 0 });
    expect(frames[2]).toMatchObject({ remote: true, dlc: 0, channel: 1 });
    expect(frames[3]).toMatchObject({ remote: true, dlc: 5, extended: true, id: 0x1abcdef0 });
    expect(frames[3]!.data).toHaveLength(0);
    expect(frames[4]).toMatchObject({ id: 0x7ff, dlc: 12 });
    expect(frames[4]!.data).toHaveLength(8);
    expect(frames[5]).toMatchObject({ fd: true, brs: true, esi: false, dlc: 9, channel: 2 });
    expect(frames[6]).toMatchObject({ fd: true, brs: false, esi: true, dlc: 15 });
    expect(hex(frames[6]!)).toBe('ab'.repeat(64));
    expect(frames[7]).toMatchObject({ error: true, id: 0x80, extended: false, dlc: 8 });
    expect(frames[8]).toMatchObject({ direction: 'tx', dlc: 3 });
    expect(hex(frames[8]!)).toBe('112233');
    expect(frames[9]).toMatchObject({ direction: 'rx' });
    expect(frames[0]!.direction).toBeUndefined();
    expect(frames[10]).toMatchObject({ id: 1, channel: 0 }); // no digits in the name: numbered by first appearance
  });

  test('a file without a trailing newline', async () => {
    const frames = await read('log', '(1.000000) can0 001#01\n(2.000000) can0 002#02');
    expect(frames.map((f) => f.id)).toEqual([1, 2]);
  });

  test('lineChunks: lines longer than the read chunk, CRLF, line numbers', async () => {
    const file = write('txt', 'short\r\n' + 'x'.repeat(50) + '\n\nlast');
    const lines: [number, string][] = [];
    for await (const c of lineChunks(file, 7)) {
      for (let i = 0; i < c.count; i++)
        lines.push([c.firstLine + i, c.buf.toString('latin1', c.starts[i], c.ends[i])]);
    }
    expect(lines).toEqual([
      [1, 'short'],
      [2, 'x'.repeat(50)],
      [3, ''],
      [4, 'last'],
    ]);
  });
});

describe('ASC', () => {
  test('base dec, relative timestamps, symbolic names, remote DLC', async () => {
    const frames = await read(
      'asc',
      [
        'date Thu Jan 01 12:00:00.000 am 1970',
        'base dec  timestamps relative',
        'no internal events logged',
        '   1.000000 1  291             Rx   d 2 10 255',
        '   0.500000 1  100x  SomeName  Tx   d 1 7',
        '   0.250000 2  17              Rx   r 3',
        '   0.250000 CANFD   1 Rx        291  Name_1   0 1 9 12 1 2 3 4 5 6 7 8 9 10 11 12   0 0 1000 0 0 0 0 0',
      ].join('\n'),
    );
    expect(frames.map((f) => f.timestamp)).toEqual([1, 1.5, 1.75, 2]);
    expect(frames[0]).toMatchObject({ id: 291, dlc: 2, channel: 0, direction: 'rx' });
    expect(hex(frames[0]!)).toBe('0aff');
    expect(frames[1]).toMatchObject({ id: 100, extended: true, direction: 'tx' });
    expect(frames[2]).toMatchObject({ id: 17, remote: true, dlc: 3, channel: 1 });
    expect(frames[3]).toMatchObject({ id: 291, fd: true, brs: false, esi: true, dlc: 9, channel: 0 });
    expect(hex(frames[3]!)).toBe('0102030405060708090a0b0c');
  });

  test('dates: English and German names, 12-hour clock, UTC', () => {
    expect(parseAscDate('Sat Sep 30 10:06:13.191 PM 2017')).toBeCloseTo(
      Date.UTC(2017, 8, 30, 22, 6, 13, 191) / 1000,
      6,
    );
    expect(parseAscDate('Sam Sep 30 15:06:13.191 2017')).toBeCloseTo(
      Date.UTC(2017, 8, 30, 15, 6, 13, 191) / 1000,
      6,
    );
    expect(parseAscDate('Mo Okt 02 12:00:00.000 am 2023')).toBe(Date.UTC(2023, 9, 2) / 1000);
    expect(parseAscDate('not a date')).toBeUndefined();
    const t = Date.UTC(2024, 1, 29, 23, 59, 58, 7) / 1000;
    expect(formatAscDate(t)).toBe('Thu Feb 29 11:59:58.007 pm 2024');
    expect(parseAscDate(formatAscDate(t))).toBe(t);
  });
});

describe('TRC versions', () => {
  test('1.0 (no header, relative times, RTR, bus info line skipped)', async () => {
    const frames = await read(
      'trc',
      ';comment\n   1)      1841  0001  8  00 11 22 33 44 55 66 77\n   2)      1842  00012345  2  RTR\n   3)      1843  FFFFFFFF  4  00 00 00 00\n',
    );
    expect(frames).toHaveLength(2);
    expect(frames[0]).toMatchObject({ timestamp: 1.841, id: 1, extended: false, dlc: 8, channel: 0 });
    expect(frames[0]!.direction).toBeUndefined();
    expect(frames[1]).toMatchObject({ timestamp: 1.842, id: 0x12345, extended: true, remote: true, dlc: 2 });
  });

  test('1.1 (type column, start time)', async () => {
    const frames = await read(
      'trc',
      ';$FILEVERSION=1.1\n;$STARTTIME=25569.5\n     1)      1841.0  Rx         0001  8  00 11 22 33 44 55 66 77\n     2)      1842.5  Tx     1FFFFFFF  1  AA\n     3)      1843.0  Warng  FFFFFFFF  4  00 00 00 08\n',
    );
    expect(frames).toHaveLength(2);
    expect(frames[0]!.timestamp).toBeCloseTo(43200 + 1.841, 6);
    expect(frames[1]).toMatchObject({ id: 0x1fffffff, extended: true, direction: 'tx', dlc: 1 });
  });

  test('1.2 and 1.3 (bus column, reserved column)', async () => {
    const v12 = await read(
      'trc',
      ';$FILEVERSION=1.2\n;$STARTTIME=0\n     1)      1841.000 2  Rx         0001  2  00 11\n',
    );
    expect(v12[0]).toMatchObject({ channel: 1, id: 1, dlc: 2 });
    const v13 = await read(
      'trc',
      ';$FILEVERSION=1.3\n;$STARTTIME=0\n     1)      1841.000 3  Tx         0001 -  2  00 11\n     2)      1842.000 3  Rx         0002 -  8  RTR\n',
    );
    expect(v13[0]).toMatchObject({ channel: 2, id: 1, dlc: 2, direction: 'tx' });
    expect(v13[1]).toMatchObject({ remote: true, dlc: 8 });
  });

  test('2.0 (length column, FD types) and 2.1 error frames', async () => {
    const v20 = await read(
      'trc',
      ';$FILEVERSION=2.0\n;$STARTTIME=0\n;$COLUMNS=N,O,T,I,d,l,D\n      1      1059.900 DT     0300 Rx  7  00 00 00 00 04 00 00\n      2      1060.000 FB     0301 Tx 12  ' +
        '01 '.repeat(12) +
        '\n      3      1061.000 BI 12345678 Rx 64  ' +
        'ff '.repeat(64) +
        '\n',
    );
    expect(v20[0]).toMatchObject({ id: 0x300, dlc: 7, fd: false, channel: 0 });
    expect(v20[1]).toMatchObject({ id: 0x301, fd: true, brs: true, esi: false, dlc: 9, direction: 'tx' });
    expect(v20[2]).toMatchObject({ id: 0x12345678, extended: true, fd: true, brs: true, esi: true, dlc: 15 });
    const v21 = await read(
      'trc',
      ';$FILEVERSION=2.1\n;$STARTTIME=0\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n      1      10.000 ER 2      - Rx -  5    04 00 08 00 00\n      2      11.000 FE 1     0123 Rx -  9    ' +
        '00 '.repeat(12) +
        '\n',
    );
    expect(v21[0]).toMatchObject({ error: true, id: 0, channel: 1, dlc: 5 });
    expect(v21[1]).toMatchObject({ fd: true, esi: true, brs: false, dlc: 9, channel: 0 });
  });
});

describe('GVRET CSV', () => {
  test("SavvyCAN's own rows, with and without the trailing comma", async () => {
    const frames = await read(
      'csv',
      'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n166064000,0000021A,false,Rx,0,8,FE,1F,00,00,00,3F,00,00,\n166065000,18FF0001,true,Tx,1,2,01,02\n166066000,20000004,true,Rx,0,8,00,00,08,00,00,00,00,00,\n',
    );
    expect(frames[0]).toMatchObject({
      timestamp: 166.064,
      id: 0x21a,
      extended: false,
      channel: 0,
      dlc: 8,
      direction: 'rx',
    });
    expect(hex(frames[0]!)).toBe('fe1f0000003f0000');
    expect(frames[1]).toMatchObject({ id: 0x18ff0001, extended: true, direction: 'tx', channel: 1, dlc: 2 });
    expect(frames[2]).toMatchObject({ error: true, id: 4, extended: false });
  });
});

describe('channel numbering (CanFrame.channel is 0-based; ASC/TRC store channel + 1)', () => {
  test('ASC: stored N reads as N - 1, a stored 0 reads as 0 (never -1)', async () => {
    const frames = await read(
      'asc',
      [
        'base hex  timestamps absolute',
        '   1.000000 0  100             Rx   d 1 00',
        '   1.000000 1  101             Rx   d 1 01',
        '   1.000000 16  102            Rx   d 1 02',
        '   1.000000 CANFD   0 Rx        103  0 0 1  1 03',
        '   1.000000 CANFD   3 Tx ErrorFrame',
        '   1.000000 0  ErrorFrame',
      ].join('\n'),
    );
    expect(frames.map((f) => f.channel)).toEqual([0, 0, 15, 0, 2, 0]);
  });

  test('TRC: Bus N reads as N - 1; Bus 0, "-" and no Bus column read as 0', async () => {
    const v21 = await read(
      'trc',
      ';$FILEVERSION=2.1\n;$STARTTIME=0\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n      1      10.000 DT 3  0100 Rx -  1    00\n      2      11.000 DT 0  0101 Rx -  1    00\n      3      12.000 DT -  0102 Rx -  1    00\n',
    );
    expect(v21.map((f) => f.channel)).toEqual([2, 0, 0]);
    const v11 = await read(
      'trc',
      ';$FILEVERSION=1.1\n;$STARTTIME=0\n     1)      1841.0  Rx         0001  1  00\n',
    );
    expect(v11[0]!.channel).toBe(0);
  });

  test('candump canN/vcanN and GVRET Bus are 0-based already and are taken as they are', async () => {
    expect((await read('log', '(1.0) can0 1#00\n(1.0) vcan3 1#00\n')).map((f) => f.channel)).toEqual([0, 3]);
    const csv = await read(
      'csv',
      'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n1,00000001,false,Rx,0,0,\n2,00000001,false,Rx,2,0,\n',
    );
    expect(csv.map((f) => f.channel)).toEqual([0, 2]);
  });
});

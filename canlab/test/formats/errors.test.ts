/** Malformed input gives CanlabInputError located at `file:line` (text) or `file@offset` (BLF). */
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { createCaptureWriter, readCapture } from '../../src/formats';
import { CanlabInputError } from '../../src/errors';
import { fixture } from '../fixtures';
import { collect, sampleFrames, tempDir } from './helpers';

const tmp = tempDir();
afterAll(() => tmp.cleanup());
let n = 0;

async function failure(ext: string, content: string | Buffer): Promise<CanlabInputError> {
  const file = tmp.file(`bad${n++}.${ext}`);
  writeFileSync(file, content);
  try {
    await collect(readCapture(file));
  } catch (err) {
    expect(err).toBeInstanceOf(CanlabInputError);
    const e = err as CanlabInputError;
    expect(e.where.startsWith(file)).toBe(true);
    return Object.assign(e, { where: e.where.slice(file.length) });
  }
  throw new Error(`${ext} content was accepted: ${String(content).slice(0, 80)}`);
}

describe('candump', () => {
  const ok = '(1.000000) can0 123#11\n';
  test.each([
    ['garbage', /expected "\(timestamp\)/],
    ['(1.0 can0 123#11', /bad timestamp/],
    ['(1.000000) can0 12X#11', /hex id followed by "#"/],
    ['(1.000000) can0 123#112', /odd number of hex digits/],
    ['(1.000000) can0 123#112233445566778899', /has 9 data bytes; a classic CAN frame carries at most 8/],
    ['(1.000000) can0 123##1' + '00'.repeat(10), /10 data bytes, not a CAN FD length/],
    ['(1.000000) can0 800#11', /standard id 800 is over 0x7FF/],
    ['(1.000000) can0 123#1122 X', /unexpected "X"/],
    ['(1.000000) can0 123#11_9', /"_" DLC suffix/],
  ])('%s', async (line, message) => {
    const e = await failure('log', ok + line + '\n' + ok);
    expect(e.where).toBe(':2');
    expect(e.message).toMatch(message);
  });
});

describe('ASC', () => {
  const head = 'date Sat Sep 30 10:06:13.191 pm 2017\nbase hex  timestamps absolute\n';
  test.each([
    ['   1.0 1  12G             Rx   d 1 00', /bad CAN id "12G"/],
    ['   1.0 1  123             Rx   d 8 01 02', /has 2 data bytes, its length says 8/],
    ['   1.0 1  123             Rx   d 2 01 02 03', /more data bytes than its DLC 2 allows/],
    ['   1.0 1  123             Rx   d 1 0G', /bad data byte "0G"/],
    ['   1.0 1  123             Rx   x 1 00', /expected "d" or "r"/],
    ['   1.0 1  800             Rx   d 1 00', /standard id 800 is over 0x7FF/],
    ['   1.0 CANFD 1 Rx 123 1 0 9 8 00 00 00 00 00 00 00 00', /data length 8 but DLC 9 means 12 bytes/],
    ['   1.0 CANFD 1 Rx 123 1 0 8 8 00 00', /has 2 data bytes, its length says 8/],
    ['   1.0 CANFD x Rx 123 1 0 8 8', /bad CANFD channel/],
    ['   1.x2 1  123             Rx   d 1 00', /bad timestamp/],
  ])('%s', async (line, message) => {
    const e = await failure('asc', head + line + '\n');
    expect(e.where).toBe(':3');
    expect(e.message).toMatch(message);
  });

  test('unknown base', async () => {
    const e = await failure('asc', 'base oct timestamps absolute\n');
    expect(e.where).toBe(':1');
    expect(e.message).toMatch(/unknown number base/);
  });
});

describe('TRC', () => {
  const head = ';$FILEVERSION=2.1\n;$STARTTIME=0\n;$COLUMNS=N,O,T,B,I,d,R,L,D\n';
  test.each([
    ['      1      10.000 DT 1  0123 Rx -  2    00 11 22', /3 data bytes, more than its DLC allows \(2\)/],
    ['      1      10.000 DT 1  0123 Rx -  8    00 11', /2 data bytes, its DLC says 8/],
    ['      1      10.000 XX 1  0123 Rx -  1    00', /unknown message type "XX"/],
    ['      1      ab.000 DT 1  0123 Rx -  1    00', /bad time offset/],
    ['      1      10.000 DT 1  01G3 Rx -  1    00', /bad CAN id/],
  ])('%s', async (line, message) => {
    const e = await failure('trc', head + line + '\n');
    expect(e.where).toBe(':4');
    expect(e.message).toMatch(message);
  });

  test('unsupported version', async () => {
    const e = await failure('trc', ';$FILEVERSION=3.0\n');
    expect(e.where).toBe(':1');
  });
});

describe('GVRET CSV', () => {
  const head = 'Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8\n';
  test.each([
    [
      '1,00000123,false,Rx,0,2,01,02,03,04,05,06,07,08,09,',
      /9 data columns, more than D8 and more than its LEN 2/,
    ],
    ['1,00000123,false,Rx,0,4,01,02,03,', /3 data bytes, its LEN says 4/],
    ['1,00000123,false,Rx,0,10,' + '00,'.repeat(10), /LEN 10 is neither/],
    ['1,00000123,maybe,Rx,0,0,', /Extended must be true or false/],
    ['x,00000123,false,Rx,0,0,', /bad time stamp/],
    ['1,40000123,true,Rx,0,0,', /over 0x1FFFFFFF/],
  ])('%s', async (line, message) => {
    const e = await failure('csv', head + line + '\n');
    expect(e.where).toBe(':2');
    expect(e.message).toMatch(message);
  });

  test('missing header', async () => {
    const e = await failure('csv', '1,00000123,false,Rx,0,0,\n');
    expect(e.where).toBe(':1');
    expect(e.message).toMatch(/^GVRET CSV: the first line must be SavvyCAN's header/);
  });
});

describe('BLF', () => {
  const good = readFileSync(fixture('python-can', 'test_CanMessage.blf'));

  test('bad file signature', async () => {
    const e = await failure('blf', Buffer.from('NOPE' + '\0'.repeat(140), 'latin1'));
    expect(e.where).toBe('@0');
    expect(e.message).toMatch(/not a BLF file.*expected "LOGG"/);
  });

  test('bad object signature', async () => {
    const bad = Buffer.from(good);
    bad.write('JUNK', 144, 'latin1');
    const e = await failure('blf', bad);
    expect(e.where).toBe('@144');
    expect(e.message).toMatch(/bad object signature "JUNK"/);
  });

  test('truncated LOG_CONTAINER', async () => {
    const e = await failure('blf', good.subarray(0, 200));
    expect(e.where).toBe('@144');
    expect(e.message).toMatch(/truncated LOG_CONTAINER: 128 bytes declared, 56 present/);
  });

  test('corrupt zlib data in a compressed container', async () => {
    const file = tmp.file('z.blf');
    const w = createCaptureWriter(file);
    for (const f of sampleFrames()) await w.write(f);
    await w.close();
    const bytes = readFileSync(file);
    bytes.fill(0x55, 144 + 40, 144 + 60);
    const e = await failure('blf', bytes);
    expect(e.where).toBe('@144');
    expect(e.message).toMatch(/zlib data is corrupt/);
  });

  test('file cut inside an inner object that spans containers', async () => {
    const file = tmp.file('cut.blf');
    const w = createCaptureWriter(file);
    // 128 KiB / 116-byte FD objects: the container boundary falls inside an object
    const fd = sampleFrames().find((f) => f.fd && f.data.length === 64)!;
    for (let i = 0; i < 1200; i++) await w.write({ ...fd, timestamp: fd.timestamp + i * 0.001 });
    await w.close();
    const bytes = readFileSync(file);
    const secondContainer = bytes.indexOf('LOBJ', 150, 'latin1');
    expect(secondContainer).toBeGreaterThan(144);
    const size = bytes.readUInt32LE(144 + 8);
    const cut = 144 + size + (size % 4);
    const e = await failure('blf', bytes.subarray(0, cut));
    expect(e.where).toBe('@144');
    expect(e.message).toMatch(/file ends inside an object/);
  });
});

describe('registry', () => {
  test('content no reader claims, with an extension none carries, is refused naming the formats', async () => {
    const file = tmp.file('capture.dat');
    writeFileSync(file, 'hello\n');
    await expect(collect(readCapture(file))).rejects.toThrow(
      /content is not a capture format canlab reads, and extension \.dat names none; formats: Vector BLF, .*; extensions: \.blf, \.log, .*\.trc/,
    );
    const noext = tmp.file('noext');
    writeFileSync(noext, 'hello\n');
    await expect(collect(readCapture(noext))).rejects.toThrow(/the file has no extension/);
    expect(() => createCaptureWriter('/x/out.trc')).toThrow(
      /is PCAN TRC, which canlab reads but cannot write; writable extensions: \.blf, \.log, \.asc, \.csv/,
    );
  });

  test('extensions are case-insensitive', async () => {
    const upper = tmp.file('UPPER.BLF');
    copyFileSync(fixture('python-can', 'test_CanMessage.blf'), upper);
    const frames = await collect(readCapture(upper));
    expect(frames).toHaveLength(2);
  });

  test('a missing file is an input error naming it', async () => {
    const file = tmp.file('missing.log');
    await expect(collect(readCapture(file))).rejects.toThrow(
      new CanlabInputError(file, 'no such file or directory'),
    );
  });
});

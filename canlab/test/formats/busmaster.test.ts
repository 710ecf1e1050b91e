/**
 * BUSMASTER logs written in BUSMASTER's layout (its LogObjectCAN/FormatMsgCAN sources), read by
 * canlab and compared frame by frame with what Wireshark's BUSMASTER reader shows in them
 * (canlab/tools/wireshark_fixtures.py stored tshark's listing beside each log). Wireshark ignores the
 * channel column and the Rx/Tx direction, and gives RELATIVE-mode frames no time: those are checked
 * against the lines themselves. A log in the layout SavvyCAN's writer produces is checked line by line.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCaptureFormat, readCapture } from '../../src/formats';
import { sniffBusmaster } from '../../src/formats/busmaster';
import { collect, tempDir } from './helpers';
import { expectSniffClaims } from './sniff-corpus';
import { expectSameAsTshark, FORMAT_FIXTURES, tsharkListing } from './tshark-listing';

const DIR = path.join(FORMAT_FIXTURES, 'busmaster');
const fx = (name: string): string => path.join(DIR, name);
const tmp = tempDir();
afterAll(() => tmp.cleanup());

const base = { extended: false, remote: false, error: false, fd: false, brs: false, esi: false };
const rxtx = (s: string): ('rx' | 'tx')[] => s.split(' ').map((d) => (d === 'T' ? 'tx' : 'rx'));

test('HEX, SYSTEM mode, two channels, remote, CAN FD and error lines: as Wireshark reads them', async () => {
  const file = fx('busmaster-hex-system.log');
  expect((await detectCaptureFormat(file)).name).toBe('BUSMASTER log');
  const listing = tsharkListing(file);
  // Wireshark turns the ERR line into an error frame with 8 zero bytes it makes up; the line records
  // no data, so canlab's error frame has none
  expect(listing[8]).toMatchObject({ error: true, length: 8, data: '0000000000000000' });
  listing[8] = { ...listing[8]!, length: 0, data: '' };
  const channels = [1, 1, 2, 1, 2, 1, 2, 2, 1, 1]; // the Channel column; BUSMASTER counts from 1
  const directions = rxtx('R R T R R R R T R R');
  expectSameAsTshark(await collect(readCapture(file)), listing, {
    tolerance: 5e-7,
    channel: (_, i) => channels[i]! - 1,
    direction: (_, i) => directions[i],
  });
});

test('DEC + ABSOLUTE session across New Year, then a HEX + RELATIVE session', async () => {
  const file = fx('busmaster-dec-sessions.log');
  const listing = tsharkListing(file);
  // RELATIVE lines carry the time since the previous frame; the session starts 1 Jan 2024 00:00:05
  const start = Date.UTC(2024, 0, 1, 0, 0, 5) / 1000;
  const relative = [start, start + 0.015, start + 0.015 + 1];
  expect(listing.slice(4).map((t) => t.time)).toEqual([null, null, null]);
  const channels = [1, 1, 1, 1, 2, 2, 1];
  const directions = rxtx('R T R R R R T');
  const frames = await collect(readCapture(file));
  expectSameAsTshark(frames, listing, {
    tolerance: 5e-7,
    untimed: (i) => relative[i - 4],
    channel: (_, i) => channels[i]! - 1,
    direction: (_, i) => directions[i],
  });
  expect(frames[0]!.timestamp).toBe(Date.UTC(2023, 11, 31, 23, 59, 58, 250) / 1000);
});

test("SavvyCAN's writer: millisecond times (3 digits), a day boundary in SYSTEM mode", async () => {
  const frames = await collect(readCapture(fx('busmaster-savvycan.log')));
  const day = Date.UTC(2023, 11, 24) / 1000;
  [86399.998, 86399.999, 86400.003].forEach((t, i) => expect(frames[i]!.timestamp - day).toBeCloseTo(t, 6));
  expect(frames.map((f) => ({ ...f, data: Buffer.from(f.data).toString('hex'), timestamp: 0 }))).toEqual([
    { ...base, timestamp: 0, id: 0x123, dlc: 8, data: '0102030405060708', channel: 0, direction: 'rx' },
    {
      ...base,
      timestamp: 0,
      id: 0x18ff00aa,
      extended: true,
      dlc: 2,
      data: 'aabb',
      channel: 1,
      direction: 'tx',
    },
    { ...base, timestamp: 0, id: 0x7df, remote: true, dlc: 8, data: '', channel: 0, direction: 'rx' },
  ]);
});

describe('bad lines name the format and the line', () => {
  const header = (mode = 'HEX', protocol = 'CAN'): string =>
    `***BUSMASTER Ver 3.2.2***\n***PROTOCOL ${protocol}***\n***[START LOGGING SESSION]***\n` +
    `***START DATE AND TIME 14:6:2024 9:41:7:965***\n***${mode}***\n***SYSTEM MODE***\n`;
  test.each([
    ['09:41:12:9420 Rx 1 0x023 s 2 40', ':7: BUSMASTER log: frame 0x023 has 1 data bytes, its DLC says 2'],
    ['09:41:12:9420 Rx 1 0x800 s 1 40', ':7: BUSMASTER log: bad 11-bit CAN id "0x800" (hex in this log)'],
    [
      '09:41:12:9420 Rx 1 0x023 q 1 40',
      ':7: BUSMASTER log: unknown frame type "q" (s, x, sr, xr, s-fd, x-fd, ERR)',
    ],
    [
      '09:41:12:9420 Rx 1 0x023 s-fd 10 ' + '00 '.repeat(10),
      ':7: BUSMASTER log: 10 bytes is not a CAN FD length',
    ],
    ['09:41:12 Rx 1 0x023 s 1 40', ':7: BUSMASTER log: expected a time h:m:s:tttt, not "09:41:12"'],
    ['09:41:12:9420 Up 1 0x023 s 1 40', ':7: BUSMASTER log: direction must be Rx or Tx, not "Up"'],
  ])('%s', async (line, message) => {
    const file = tmp.file('bad.log');
    writeFileSync(file, header() + line + '\n');
    const err = await collect(readCapture(file)).catch((e: unknown) => String(e));
    expect(err).toContain(file + message);
  });

  test('decimal logs take decimal ids and bytes', async () => {
    const file = tmp.file('dec.log');
    writeFileSync(file, header('DEC') + '09:41:12:9420 Rx 1 0x023 s 1 40\n');
    expect(await collect(readCapture(file)).catch((e: unknown) => String(e))).toBe(
      `${file}:7: BUSMASTER log: bad 11-bit CAN id "0x023" (decimal in this log)`,
    );
    writeFileSync(file, header('DEC') + '09:41:12:9420 Rx 1 0035 s 1 256\n');
    expect(await collect(readCapture(file)).catch((e: unknown) => String(e))).toBe(
      `${file}:7: BUSMASTER log: bad decimal data byte "256"`,
    );
  });

  test('J1939 and LIN logs are refused by name', async () => {
    const file = tmp.file('j1939.log');
    writeFileSync(file, header('HEX', 'J1939'));
    expect(await collect(readCapture(file)).catch((e: unknown) => String(e))).toBe(
      `${file}:2: BUSMASTER log: a BUSMASTER J1939 log; canlab reads BUSMASTER's CAN logs ("***PROTOCOL CAN***")`,
    );
  });
});

test('the BUSMASTER content test claims the BUSMASTER logs and nothing else', async () => {
  await expectSniffClaims(
    sniffBusmaster,
    (f) => path.basename(f).startsWith('busmaster-') && f.endsWith('.log'),
  );
});

/**
 * A CRTD log in the layout of OVMS's specification and writer (its record examples, OVMS's bus-prefixed
 * frame and CER/CST/CEV/CVR records, SavvyCAN's 8-digit ids), every frame compared with what its
 * line says.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCaptureFormat, readCapture } from '../../src/formats';
import { sniffCrtd } from '../../src/formats/crtd';
import { collect, tempDir } from './helpers';
import { expectSniffClaims } from './sniff-corpus';
import { FORMAT_FIXTURES } from './tshark-listing';

const FILE = path.join(FORMAT_FIXTURES, 'crtd', 'ovms.crtd');
const tmp = tempDir();
afterAll(() => tmp.cleanup());

test('every frame of ovms.crtd; comment, error, statistics, event and version records carry none', async () => {
  expect((await detectCaptureFormat(FILE)).name).toBe('CRTD');
  const frames = await collect(readCapture(FILE));
  const t0 = 1542473901;
  expect(frames.map((f) => f.timestamp - t0)).toEqual(
    [
      0.020305, 0.02097, 0.021259, 0.02156, 0.030341, 0.034872, 0.036694, 0.040289, 0.042, 0.043073, 0.044,
    ].map((t) => expect.closeTo(t, 6)),
  );
  const line = (f: (typeof frames)[number]): string =>
    `${f.channel} ${f.direction!} ${f.extended ? 'x' : 's'} ${f.id.toString(16)} ${f.dlc} ${Buffer.from(f.data).toString('hex')}`;
  expect(frames.map(line)).toEqual([
    '0 rx s 213 8 00000000c0010000',
    '1 rx s 318 8 920b1310113a0000',
    '1 tx x 18ff00aa 2 0102',
    '1 rx s 408 1 00',
    '0 rx s 358 8 1808200000000020',
    '2 rx x 123 0 ',
    '2 rx s 41c 1 10',
    '0 rx s 428 2 0030', // no bus number: bus 1
    '0 tx s 7ff 0 ',
    '0 rx s 248 7 29290fbc011000',
    '11 rx s 213 4 03410d00', // bus 12, id written with 8 digits as SavvyCAN does
  ]);
  expect(frames.every((f) => !f.remote && !f.error && !f.fd)).toBe(true);
});

describe('bad lines name the format and the line', () => {
  test.each([
    ['abc R11 123', 'CRTD: expected a timestamp in seconds, not "abc"'],
    ['1.5 1R11 800 00', 'CRTD: id 800 does not fit the 11-bit id its record type 1R11 says'],
    ['1.5 1R29 20000000', 'CRTD: id 20000000 does not fit the 29-bit id its record type 1R29 says'],
    ['1.5 1R11 XYZ 00', 'CRTD: bad CAN id "XYZ"'],
    ['1.5 1R11 123 00 01 02 03 04 05 06 07 08', 'CRTD: 9 data bytes; a CRTD frame carries at most 8'],
    ['1.5 1R11 123 0G', 'CRTD: bad data byte "0G"'],
  ])('%s', async (bad, message) => {
    const file = tmp.file('bad.crtd');
    writeFileSync(file, `1.0 CXX OVMS CRTD\n1.1 1R11 123 00\n${bad}\n`);
    expect(await collect(readCapture(file)).catch((e: unknown) => String(e))).toBe(`${file}:3: ${message}`);
  });
});

test('the CRTD content test claims the CRTD log and nothing else', async () => {
  await expectSniffClaims(sniffCrtd, (f) => f.endsWith('.crtd'));
});

/**
 * A Vector trace log in the layout SavvyCAN reads and writes (the logger header and rows it quotes,
 * then rows as its saveTraceFile writes them, one with an epoch-based time), every frame compared with
 * what its line says.
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { detectCaptureFormat, readCapture } from '../../src/formats';
import { sniffVectorTrace } from '../../src/formats/vector-trace';
import { collect, tempDir } from './helpers';
import { expectSniffClaims } from './sniff-corpus';
import { FORMAT_FIXTURES } from './tshark-listing';

const FILE = path.join(FORMAT_FIXTURES, 'trace', 'logger.trace');
const tmp = tempDir();
afterAll(() => tmp.cleanup());

test('every frame of logger.trace; the comment header carries none', async () => {
  expect((await detectCaptureFormat(FILE)).name).toBe('Vector trace');
  const frames = await collect(readCapture(FILE));
  expect(frames.map((f) => f.timestamp)).toEqual(
    [0.0008, 0.0021, 1.2345, 60, 3600.5, 1718000000.123].map((t) => expect.closeTo(t, 6)),
  );
  const line = (f: (typeof frames)[number]): string =>
    `${f.extended ? 'x' : 's'} ${f.id.toString(16)} ${f.dlc} ${Buffer.from(f.data).toString('hex')}`;
  expect(frames.map(line)).toEqual([
    's 268 8 55008403a80d3800',
    's e 8 1fd33fff08ffe0cb',
    'x 18ff00aa 3 010203',
    's 7ff 0 ',
    'x 800 2 abcd', // no extended flag in the format: above 0x7FF is a 29-bit id, as SavvyCAN reads it
    's 123 1 7f',
  ]);
  expect(frames.every((f) => f.channel === 0 && f.direction === undefined && !f.remote && !f.fd)).toBe(true);
});

describe('bad lines name the format and the line', () => {
  test.each([
    ['7\t00:00:02:0000\t00000123\t2\t01', 'Vector trace: frame 00000123 has 1 data bytes, its DLC says 2'],
    ['7\t00:00:02:0000\t00000123\t9\t01', 'Vector trace: expected a frame line'],
    ['7\t00:00:02.0000\t00000123\t1\t01', 'Vector trace: expected a frame line'],
    ['7\t00:00:02:0000\t00000123\t1\t0x1FF', 'Vector trace: bad data byte "0x1FF"'],
  ])('%s', async (bad, message) => {
    const file = tmp.file('bad.trace');
    writeFileSync(file, `;  CAN Logger trace file\n         0\t00:00:00:0008\t00000268\t1\t55\n${bad}\n`);
    expect(await collect(readCapture(file)).catch((e: unknown) => String(e))).toContain(
      `${file}:3: ${message}`,
    );
  });
});

test('the Vector trace content test claims the trace log and nothing else', async () => {
  await expectSniffClaims(sniffVectorTrace, (f) => f.endsWith('.trace'));
});

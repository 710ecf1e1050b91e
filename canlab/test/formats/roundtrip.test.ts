/**
 * write → read round trips for every writable format. Each format keeps everything except what
 * its layout cannot say; `normalise` states exactly that, per format, and the resolution of its
 * timestamps:
 * - candump .log: 1 µs; error frames lose `extended` (SocketCAN error ids carry no EFF flag).
 * - ASC: 1 µs; error frames keep only time, channel (and FD flag + direction on CANFD lines);
 *   a frame without a direction comes back Rx.
 * - BLF: 1 ns on disk, ~1 µs after float arithmetic on epoch times; error frames lose FD flags
 *   and direction; a frame without a direction comes back Rx.
 * - GVRET CSV: 1 µs; no BRS/ESI, FD frames of ≤ 8 bytes come back classic, remote frames come back
 *   as zero-length data frames, classic DLC 9..15 comes back as 8, error frames lose `extended`;
 *   no direction → Rx.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createCaptureWriter, readCapture, readCaptureBatches } from '../../src/formats';
import type { CanFrame } from '../../src/frame';
import { collect, expectSameFrames, frame, manyFrames, sampleFrames, tempDir } from './helpers';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

async function roundTrip(name: string, frames: CanFrame[]): Promise<CanFrame[]> {
  const file = tmp.file(name);
  const w = createCaptureWriter(file);
  for (const f of frames) await w.write(f);
  await w.close();
  return collect(readCapture(file));
}

const withDirection = (f: CanFrame): CanFrame => ({ ...f, direction: f.direction ?? 'rx' });

const normalise: Record<string, (f: CanFrame) => CanFrame> = {
  log: (f) => (f.error ? { ...f, extended: false } : f),
  asc: (f) => {
    if (!f.error) return withDirection(f);
    const e: CanFrame = {
      ...f,
      id: 0,
      extended: false,
      remote: false,
      brs: false,
      esi: false,
      dlc: 0,
      data: new Uint8Array(0),
    };
    if (!f.fd) delete e.direction;
    return e;
  },
  blf: (f) => {
    if (!f.error) return withDirection(f);
    const e: CanFrame = { ...f, fd: false, brs: false, esi: false };
    delete e.direction;
    return e;
  },
  csv: (f) => {
    const c: CanFrame = withDirection({ ...f, brs: false, esi: false });
    if (c.remote) return { ...c, remote: false, dlc: 0, data: new Uint8Array(0) };
    if (c.error) return { ...c, extended: false, fd: false, dlc: c.data.length };
    if (c.fd && c.data.length <= 8) return { ...c, fd: false, dlc: c.data.length };
    if (!c.fd && c.dlc > 8) return { ...c, dlc: 8 };
    return c;
  },
};

describe.each(['log', 'asc', 'blf', 'csv'])('%s round trip', (ext) => {
  const norm = normalise[ext]!;
  const tolerance = 1.01e-6;

  test('keeps every field of the sample frames the format can represent', async () => {
    const frames = sampleFrames().filter((f) => !(ext === 'log' && f.fd && f.remote));
    const back = await roundTrip(`sample.${ext}`, frames);
    expectSameFrames(back, frames.map(norm), tolerance);
  });

  test('5000 random frames (several BLF containers, objects split across them)', async () => {
    const frames = manyFrames(5000);
    const back = await roundTrip(`many.${ext}`, frames);
    expectSameFrames(back, frames.map(norm), tolerance);
  });

  test('relative timestamps (before 1990) stay relative', async () => {
    const frames = sampleFrames(0.5);
    const back = await roundTrip(`relative.${ext}`, frames);
    expectSameFrames(back, frames.map(norm), tolerance);
    expect(back[0]!.timestamp).toBeCloseTo(0.501237, 6);
  });

  test('an empty capture reads back empty', async () => {
    expect(await roundTrip(`empty.${ext}`, [])).toEqual([]);
  });
});

// 20 000 frames are needed to span several containers: a second on an idle machine, many more on one
// busy with the integration suites; the bound only ends a hang (speed is the benchmark's business).
test('BLF splits objects across containers and readCaptureBatches yields them all', async () => {
  const frames = manyFrames(20000);
  const file = tmp.file('batches.blf');
  const w = createCaptureWriter(file);
  for (const f of frames) await w.write(f);
  await w.close();
  let n = 0;
  for await (const batch of readCaptureBatches(file)) n += batch.length;
  expect(n).toBe(20000);
}, 60_000);

test('writers refuse frames whose data does not match the DLC', async () => {
  const w = createCaptureWriter(tmp.file('bad.log'));
  await expect(
    w.write({
      timestamp: 1,
      id: 1,
      extended: false,
      remote: false,
      error: false,
      fd: false,
      brs: false,
      esi: false,
      dlc: 2,
      data: new Uint8Array(3),
      channel: 0,
    }),
  ).rejects.toThrow(/3 data bytes but DLC 2/);
  await w.close();
});

test('candump refuses CAN FD remote frames it cannot record', async () => {
  const w = createCaptureWriter(tmp.file('fdremote.log'));
  await expect(
    w.write({
      timestamp: 1,
      id: 1,
      extended: false,
      remote: true,
      error: false,
      fd: true,
      brs: false,
      esi: false,
      dlc: 15,
      data: new Uint8Array(0),
      channel: 0,
    }),
  ).rejects.toThrow(/remote/);
  await w.close();
});

test('GVRET CSV writes FD frames with LEN = byte count and extra data columns', async () => {
  const file = tmp.file('fd.csv');
  const w = createCaptureWriter(file);
  const [fd64] = sampleFrames().filter((f) => f.fd && f.data.length === 64);
  await w.write(fd64!);
  await w.close();
  const text = readFileSync(file, 'latin1').split('\n');
  expect(text[0]).toBe('Time Stamp,ID,Extended,Dir,Bus,LEN,D1,D2,D3,D4,D5,D6,D7,D8');
  const cols = text[1]!.split(',');
  expect(cols.slice(1, 6)).toEqual(['1C4D80A7', 'true', 'Tx', '0', '64']);
  expect(cols.slice(6, 70)).toHaveLength(64);
  expect(cols[69]).toBe('3F');
});

test('a candump file written by hand reads back through convert-style copying unchanged', async () => {
  const src = tmp.file('hand.log');
  writeFileSync(
    src,
    '(1436509052.249713) vcan0 123#DEADBEEF\n(1436509052.250000) vcan1 12345678##3' +
      '11'.repeat(12) +
      ' T\n',
  );
  const frames = await collect(readCapture(src));
  const back = await roundTrip('hand-copy.log', frames);
  expectSameFrames(back, frames, 1e-6);
});

test('files keep their on-disk channel numbering: ASC stores channel + 1, candump and GVRET the 0-based channel', async () => {
  const frames = [
    frame({ timestamp: 1, id: 0x123, dlc: 1, channel: 0, direction: 'rx' }),
    frame({ timestamp: 2, id: 0x124, dlc: 1, fd: true, channel: 2, direction: 'tx' }),
  ];
  const written = async (ext: string): Promise<string[]> => {
    const file = tmp.file(`channels.${ext}`);
    const w = createCaptureWriter(file);
    for (const f of frames) await w.write(f);
    await w.close();
    expect((await collect(readCapture(file))).map((f) => f.channel)).toEqual([0, 2]);
    return readFileSync(file, 'latin1').split('\n');
  };
  const asc = await written('asc');
  expect(asc.find((l) => l.includes(' 123 '))).toMatch(/^ +1\.000000 1 {2}123 +Rx/);
  expect(asc.find((l) => l.includes(' 124 '))).toMatch(/^ +2\.000000 CANFD +3 Tx /);
  expect((await written('log')).slice(0, 2).map((l) => l.split(' ')[1])).toEqual(['can0', 'can2']);
  expect((await written('csv')).slice(1, 3).map((l) => l.split(',')[4])).toEqual(['0', '2']);
});

test('writers refuse a negative or fractional channel', async () => {
  for (const ext of ['log', 'asc', 'blf', 'csv']) {
    const w = createCaptureWriter(tmp.file(`badchannel.${ext}`));
    await expect(w.write(frame({ timestamp: 1, id: 1, channel: -1 }))).rejects.toThrow(
      /channel -1; channels are integers counted from 0/,
    );
    await expect(w.write(frame({ timestamp: 1, id: 1, channel: 0.5 }))).rejects.toThrow(/channel 0\.5/);
    await w.close();
  }
});

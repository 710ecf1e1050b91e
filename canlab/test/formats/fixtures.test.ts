/**
 * python-can's test files (../shared/fixtures/can/python-can) parse to the frames the fixtures
 * README lists, or, for the ASC/TRC files, to what reading the files line by line shows.
 *
 * Channels are 0-based, as python-can reports them and the README lists them: the files store
 * channel + 1, so the BLF channels stored as 0x1111, 0x11 and 7 read as the README's 0x1110, 0x10
 * and 6, and test_CanMessage.asc's "channel 2 in the file" reads as 1.
 * ASC timestamps are absolute: the `Begin Triggerblock` date (UTC) plus the event time, which the
 * README gives as "t=2.5010 s (absolute 2017-09-30 22:06:13.191 + 2.5010)".
 * BLF DLC fields over 15 (0x33, 0x66, 0x22 in these synthetic files) become the smallest DLC that
 * holds the bytes read (8 for classic, 15 for 64 bytes), and ids over 0x7FF read as extended.
 */
import { readCapture } from '../../src/formats';
import type { CanFrame } from '../../src/frame';
import { fixture } from '../fixtures';
import { collect } from './helpers';

const pc = (name: string): string => fixture('python-can', name);
const hex = (f: CanFrame): string => Buffer.from(f.data).toString('hex');
const seq = (n: number): string => Buffer.from(Array.from({ length: n }, (_, i) => i)).toString('hex');
const BLF_TS = 2459565876.494607;

describe('BLF fixtures', () => {
  test.each(['test_CanMessage.blf', 'test_CanMessage2.blf'])('%s: two CAN messages', async (name) => {
    const frames = await collect(readCapture(pc(name)));
    expect(frames).toHaveLength(2);
    for (const f of frames) {
      expect(f.timestamp).toBeCloseTo(BLF_TS, 5);
      expect(f).toMatchObject({
        id: 0x4444444,
        extended: true,
        remote: false,
        error: false,
        fd: false,
        channel: 0x1110,
        dlc: 8,
        direction: 'rx',
      });
      expect(hex(f)).toBe('5566778899aabbcc');
    }
  });

  test('test_CanFdMessage.blf: two 64-byte FD frames with BRS and ESI', async () => {
    const frames = await collect(readCapture(pc('test_CanFdMessage.blf')));
    expect(frames).toHaveLength(2);
    for (const f of frames) {
      expect(f.timestamp).toBeCloseTo(BLF_TS, 5);
      expect(f).toMatchObject({
        id: 0x4444444,
        extended: true,
        fd: true,
        brs: true,
        esi: true,
        remote: false,
        channel: 0x1110,
        dlc: 15,
      });
      expect(hex(f)).toBe(seq(64));
    }
  });

  test('test_CanFdMessage64.blf: two CAN_FD_MESSAGE_64 remote frames, Tx', async () => {
    const frames = await collect(readCapture(pc('test_CanFdMessage64.blf')));
    expect(frames).toHaveLength(2);
    for (const f of frames) {
      expect(f.timestamp).toBeCloseTo(BLF_TS, 5);
      expect(f).toMatchObject({
        id: 0x15555555,
        extended: true,
        fd: true,
        remote: true,
        brs: true,
        esi: true,
        channel: 0x10,
        direction: 'tx',
        dlc: 15,
      });
      expect(f.data).toHaveLength(0);
    }
  });

  test('test_CanErrorFrameExt.blf: two extended error frames', async () => {
    const frames = await collect(readCapture(pc('test_CanErrorFrameExt.blf')));
    expect(frames).toHaveLength(2);
    for (const f of frames) {
      expect(f.timestamp).toBeCloseTo(BLF_TS, 5);
      expect(f).toMatchObject({
        error: true,
        id: 0x19999999,
        extended: true,
        channel: 0x1110,
        dlc: 8,
        fd: false,
      });
      expect(hex(f)).toBe('ccddeeff11223344');
    }
  });

  test('issue_1905.blf: FD frame whose valid-bytes count exceeds the data present', async () => {
    const frames = await collect(readCapture(pc('issue_1905.blf')));
    expect(frames.length).toBeGreaterThan(1);
    const f = frames[0]!;
    expect(f.timestamp).toBeCloseTo(1735654183.491113, 5);
    expect(f).toMatchObject({
      channel: 6,
      id: 0x6a9,
      extended: false,
      fd: true,
      brs: true,
      esi: false,
      remote: false,
      dlc: 15,
    });
    expect(hex(f)).toBe('ff'.repeat(48) + '00'.repeat(16));
  });
});

describe('ASC fixtures', () => {
  const sat2206 = Date.UTC(2017, 8, 30, 22, 6, 13, 191) / 1000; // "Begin Triggerblock Sat Sep 30 10:06:13.191 PM 2017"
  const sam1506 = Date.UTC(2017, 8, 30, 15, 6, 13, 191) / 1000; // "Begin Triggerblock Sam Sep 30 15:06:13.191 2017" (German)

  test('test_CanMessage.asc', async () => {
    const [a, b, ...rest] = await collect(readCapture(pc('test_CanMessage.asc')));
    expect(rest).toHaveLength(0);
    expect(a!.timestamp - sat2206).toBeCloseTo(2.501, 6);
    expect(a).toMatchObject({
      id: 0xc8,
      extended: false,
      channel: 1,
      direction: 'tx',
      dlc: 8,
      fd: false,
      remote: false,
      error: false,
    });
    expect(hex(a!)).toBe('0908070605040302');
    expect(b!.timestamp - sat2206).toBeCloseTo(17.876708, 6);
    expect(b).toMatchObject({ id: 0x6f9, extended: false, channel: 0, direction: 'rx', dlc: 8 });
    expect(hex(b!)).toBe('050c000000000000');
  });

  test('test_CanFdMessage.asc: three FD frames, with and without a symbolic name', async () => {
    const frames = await collect(readCapture(pc('test_CanFdMessage.asc')));
    expect(frames.map((f) => f.timestamp - sam1506).map((t) => Math.round(t * 1e6))).toEqual([
      30005021, 30005041, 30005071,
    ]);
    expect(frames[0]).toMatchObject({
      id: 0x300,
      extended: false,
      channel: 0,
      direction: 'rx',
      fd: true,
      brs: true,
      esi: false,
      dlc: 8,
    });
    expect(hex(frames[0]!)).toBe('11c2030405060708');
    expect(frames[1]).toMatchObject({
      id: 0x1c4d80a7,
      extended: true,
      channel: 1,
      direction: 'tx',
      fd: true,
      brs: false,
      esi: true,
      dlc: 8,
    });
    expect(hex(frames[1]!)).toBe('12c2030405060708');
    expect(frames[2]).toMatchObject({
      id: 0x30a,
      channel: 2,
      direction: 'rx',
      fd: true,
      brs: true,
      esi: true,
      dlc: 8,
    });
    expect(hex(frames[2]!)).toBe('0102030405060708');
  });

  test('test_CanFdMessage64.asc: two 64-byte FD frames', async () => {
    const frames = await collect(readCapture(pc('test_CanFdMessage64.asc')));
    expect(frames).toHaveLength(2);
    expect(frames[0]!.timestamp - sam1506).toBeCloseTo(30.506898, 6);
    expect(frames[0]).toMatchObject({
      id: 0x4ee,
      extended: false,
      channel: 3,
      direction: 'rx',
      fd: true,
      brs: false,
      esi: true,
      dlc: 15,
    });
    // as python-can reads it: A1 02 03 04, 59 zero bytes, then 0x64 (the 64th data token)
    expect(hex(frames[0]!)).toBe('a1020304' + '00'.repeat(59) + '64');
    expect(frames[1]).toMatchObject({
      id: 0x1c4d80a7,
      extended: true,
      channel: 3,
      fd: true,
      brs: true,
      esi: false,
      dlc: 15,
    });
    expect(hex(frames[1]!)).toBe('b1020304' + '00'.repeat(59) + '64');
  });

  test('test_CanRemoteMessage.asc: three remote frames', async () => {
    const frames = await collect(readCapture(pc('test_CanRemoteMessage.asc')));
    expect(frames.map((f) => [f.id, f.channel, f.direction, f.remote, f.dlc, f.data.length])).toEqual([
      [0x100, 1, 'rx', true, 0, 0],
      [0x200, 2, 'tx', true, 0, 0],
      [0x300, 3, 'rx', true, 8, 0],
    ]);
    expect(frames[2]!.timestamp - sam1506).toBeCloseTo(2.584921, 6);
  });

  test('logfile.asc: error frames, remote, extended, CANFD; statistics, status and J1939TP lines skipped', async () => {
    const frames = await collect(readCapture(pc('logfile.asc')));
    expect(frames).toHaveLength(20);
    expect(frames.filter((f) => f.error)).toHaveLength(4);
    expect(frames.filter((f) => f.remote)).toHaveLength(4);
    expect(frames.filter((f) => f.fd)).toHaveLength(4);
    expect(
      frames.slice(0, 3).map((f) => [f.error, f.channel, Math.round((f.timestamp - sam1506) * 1e6)]),
    ).toEqual([
      [true, 0, 2501000],
      [true, 0, 2501010],
      [true, 1, 2501020],
    ]);
    const ext = frames[6]!;
    expect(ext).toMatchObject({ id: 0x18ebff00, extended: true, channel: 0, direction: 'rx', dlc: 8 });
    expect(hex(ext)).toBe('01a00fa6603bd140');
    expect(frames[10]).toMatchObject({ id: 0x6f9, extended: false, channel: 0 });
    const fdRemote = frames.find((f) => f.id === 0x50005)!;
    expect(fdRemote).toMatchObject({
      extended: true,
      fd: true,
      remote: true,
      dlc: 5,
      channel: 2,
      direction: 'tx',
    });
    const fdError = frames[19]!;
    expect(fdError).toMatchObject({ error: true, fd: true, channel: 4, direction: 'tx' });
    expect(fdError.timestamp - sam1506).toBeCloseTo(30.806898, 6);
  });

  test('issue_1256.asc: a real 1457-frame trace without a Begin Triggerblock line', async () => {
    const frames = await collect(readCapture(pc('issue_1256.asc')));
    expect(frames).toHaveLength(1457);
    const start = Date.UTC(2014, 4, 27, 16, 9, 35) / 1000; // "date Tue May 27 04:09:35.000 pm 2014"
    expect(frames[0]!.timestamp - start).toBeCloseTo(0.019968, 6);
    expect(frames[0]).toMatchObject({ id: 0x64, channel: 0, direction: 'rx', dlc: 4, extended: false });
    expect(hex(frames[0]!)).toBe('64000000');
    expect(frames[3]).toMatchObject({ id: 0x11, dlc: 8 });
    expect(hex(frames[3]!)).toBe('4a28f60700000000');
    const last = frames[frames.length - 1]!;
    expect(last.timestamp - start).toBeCloseTo(7.960498, 6);
    expect(last).toMatchObject({ id: 0x12, dlc: 4 });
    expect(hex(last)).toBe('00010000');
    expect(frames.every((f) => f.channel === 0 && f.direction === 'rx' && !f.extended && !f.fd)).toBe(true);
    for (let i = 1; i < frames.length; i++)
      expect(frames[i]!.timestamp).toBeGreaterThanOrEqual(frames[i - 1]!.timestamp);
  });
});

describe('TRC fixture', () => {
  // Bus 1 reads as channel 0: canlab applies the 0-based convention to TRC as to ASC and BLF
  // (python-can's TRC reader, unlike its ASC and BLF readers, keeps the Bus number as it is).
  test('test_CanMessage_V2_1.trc: 11 frames (the ST status line is skipped)', async () => {
    const frames = await collect(readCapture(pc('test_CanMessage_V2_1.trc')));
    expect(frames).toHaveLength(11);
    const start = (44548.6028595139 - 25569) * 86400; // ;$STARTTIME, days since 1899-12-30 UTC
    expect(frames[0]!.timestamp - start).toBeCloseTo(17.5354, 6);
    expect(frames[0]).toMatchObject({
      id: 0x100,
      extended: true,
      channel: 0,
      direction: 'tx',
      dlc: 8,
      remote: false,
    });
    expect(hex(frames[0]!)).toBe('0000000000000000');
    expect(frames[3]).toMatchObject({ id: 0, extended: false, direction: 'tx', dlc: 8 });
    expect(frames[3]!.timestamp - start).toBeCloseTo(19.2954, 6);
    expect(frames[10]).toMatchObject({
      id: 0x704,
      extended: false,
      remote: true,
      dlc: 1,
      direction: 'rx',
      channel: 0,
    });
    expect(frames[10]!.data).toHaveLength(0);
    expect(frames[10]!.timestamp - start).toBeCloseTo(48.9376, 6);
  });
});

/** BLF variants the writer does not produce: stored (uncompressed) containers, v2 object headers, 10 µs timestamps. */
import { readFileSync, writeFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { createCaptureWriter, readCapture } from '../../src/formats';
import { collect, frame, tempDir } from './helpers';

const tmp = tempDir();
afterAll(() => tmp.cleanup());

function object(
  type: number,
  headerVersion: 1 | 2,
  flags: number,
  timestamp: number,
  payload: Buffer,
): Buffer {
  const headerSize = headerVersion === 1 ? 32 : 40;
  const h = Buffer.alloc(headerSize);
  h.write('LOBJ', 0, 'latin1');
  h.writeUInt16LE(headerSize, 4);
  h.writeUInt16LE(headerVersion, 6);
  h.writeUInt32LE(headerSize + payload.length, 8);
  h.writeUInt32LE(type, 12);
  h.writeUInt32LE(flags, 16);
  h.writeBigUInt64LE(BigInt(timestamp), 24);
  return Buffer.concat([h, payload]);
}

function canMessage(channel: number, flags: number, dlc: number, id: number, data: number[]): Buffer {
  const p = Buffer.alloc(16);
  p.writeUInt16LE(channel, 0);
  p[2] = flags;
  p[3] = dlc;
  p.writeUInt32LE(id >>> 0, 4);
  Buffer.from(data).copy(p, 8);
  return p;
}

function container(inner: Buffer): Buffer {
  const h = Buffer.alloc(32);
  h.write('LOBJ', 0, 'latin1');
  h.writeUInt16LE(16, 4);
  h.writeUInt16LE(1, 6);
  h.writeUInt32LE(32 + inner.length, 8);
  h.writeUInt32LE(10, 12);
  h.writeUInt16LE(0, 16); // stored, no compression
  h.writeUInt32LE(inner.length, 24);
  return Buffer.concat([h, inner, Buffer.alloc((32 + inner.length) % 4)]);
}

function fileHeader(systemTime: number[]): Buffer {
  const h = Buffer.alloc(144);
  h.write('LOGG', 0, 'latin1');
  h.writeUInt32LE(144, 4);
  systemTime.forEach((v, i) => h.writeUInt16LE(v, 40 + i * 2));
  return h;
}

test('stored containers, v1/v2 headers, 10 µs and 1 ns units, CAN_MESSAGE2, an object split across containers, skipped object types', async () => {
  const a = object(1, 2, 1, 12345, canMessage(1, 0x01, 2, 0x123, [0xaa, 0xbb])); // v2, 10 µs units → 0.12345 s, Tx
  const b = object(
    86,
    1,
    2,
    250_000_000,
    Buffer.concat([canMessage(2, 0x80, 3, 0x80000456, []), Buffer.alloc(8)]),
  ); // CAN_MESSAGE2, remote, extended
  const skipped = object(65, 1, 2, 0, Buffer.alloc(12)); // APP_TEXT-like object: ignored
  const inner = Buffer.concat([a, skipped, b]);
  const cut = a.length + skipped.length + 10; // split b across two containers
  const start = [2024, 1, 1, 1, 12, 0, 0, 500]; // 2024-01-01 12:00:00.500 UTC
  const file = tmp.file('crafted.blf');
  writeFileSync(
    file,
    Buffer.concat([fileHeader(start), container(inner.subarray(0, cut)), container(inner.subarray(cut))]),
  );
  const frames = await collect(readCapture(file));
  const t0 = Date.UTC(2024, 0, 1, 12, 0, 0, 500) / 1000;
  expect(frames).toHaveLength(2);
  expect(frames[0]!.timestamp - t0).toBeCloseTo(0.12345, 6);
  expect(frames[0]).toMatchObject({
    id: 0x123,
    extended: false,
    dlc: 2,
    channel: 0,
    direction: 'tx',
    remote: false,
  });
  expect(Array.from(frames[0]!.data)).toEqual([0xaa, 0xbb]);
  expect(frames[1]!.timestamp - t0).toBeCloseTo(0.25, 6);
  expect(frames[1]).toMatchObject({
    id: 0x456,
    extended: true,
    remote: true,
    dlc: 3,
    channel: 1,
    direction: 'rx',
  });
  expect(frames[1]!.data).toHaveLength(0);
});

test('channels: stored N reads as N - 1; a stored 0 (never written by Vector) reads as 0, not -1', async () => {
  const inner = Buffer.concat(
    [0, 1, 2, 0xffff].map((ch, i) => object(1, 1, 2, i * 1000, canMessage(ch, 0, 1, 0x100 + i, [i]))),
  );
  const file = tmp.file('channels.blf');
  writeFileSync(file, Buffer.concat([fileHeader([0, 0, 0, 0, 0, 0, 0, 0]), container(inner)]));
  const frames = await collect(readCapture(file));
  expect(frames.map((f) => [f.id, f.channel])).toEqual([
    [0x100, 0],
    [0x101, 0],
    [0x102, 1],
    [0x103, 0xfffe],
  ]);
});

test('the writer stores channel + 1 (Vector numbering) and refuses a channel the 16-bit field cannot hold', async () => {
  const file = tmp.file('written-channels.blf');
  const w = createCaptureWriter(file);
  for (const channel of [0, 1, 0xfffe])
    await w.write({
      ...frame({ timestamp: 1700000000 + channel / 1e6, id: 0x10 + (channel & 0xf) }),
      channel,
    });
  await expect(w.write({ ...frame({ timestamp: 1700000001, id: 1 }), channel: 0xffff })).rejects.toThrow(
    /16-bit channel field/,
  );
  await w.close();
  // decompress the single container and read the CAN_MESSAGE channel fields (u16 right after the 32-byte object header)
  const bytes = readFileSync(file);
  const payload = inflateSync(bytes.subarray(144 + 32, 144 + bytes.readUInt32LE(144 + 8)));
  const stored: number[] = [];
  for (let pos = 0; pos < payload.length; pos += payload.readUInt32LE(pos + 8))
    stored.push(payload.readUInt16LE(pos + 32));
  expect(stored).toEqual([1, 2, 0xffff]);
  expect((await collect(readCapture(file))).map((f) => f.channel)).toEqual([0, 1, 0xfffe]);
});

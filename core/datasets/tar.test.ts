import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import { RefusedError } from '../errors';
import {
  BLOCK,
  archiveBytes,
  archivePieces,
  checkedBytes,
  tarLayout,
  ustarHeader,
  StoredBytesMismatch,
  type ByteSource,
  type TarLayout,
} from './tar';

/** Archives of in-memory members, read back with tar-stream as the independent reader. */

const MTIME = 1_700_000_123;
const longDir = `images/train/${'d'.repeat(90)}`;
const CONTENTS: Record<string, Buffer> = {
  'annotations/instances_train.json': Buffer.from('{"images":[]}'),
  'datasheet.md': Buffer.alloc(0),
  'data.yaml': Buffer.from('x'),
  [`${longDir}/${'f'.repeat(96)}.jpg`]: Buffer.alloc(BLOCK, 7),
  'images/train/ünïcode-名前.jpg': Buffer.alloc(BLOCK - 1, 3),
  'labels/train/a.txt': Buffer.alloc(BLOCK + 1, 9),
  'parquet/objects/part-00000.parquet': Buffer.from(Array.from({ length: 5000 }, (_, i) => (i * 31) % 251)),
};
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const members = Object.entries(CONTENTS).map(([path, bytes]) => ({
  path,
  size: bytes.length,
  sha256: sha(bytes),
}));

/** Opens in-memory members in small chunks, like a store stream, and records what was opened and destroyed. */
function memoryStore(
  contents: Buffer[],
  log: { opened: number[]; destroyed: number } = { opened: [], destroyed: 0 },
) {
  const open = async (index: number, offset: number, length: number): Promise<ByteSource> => {
    log.opened.push(index);
    const bytes = contents[index]!.subarray(offset, offset + length);
    const chunks = Array.from({ length: Math.ceil(bytes.length / 700) }, (_, i) =>
      bytes.subarray(i * 700, (i + 1) * 700),
    );
    const stream = Readable.from(chunks);
    stream.on('close', () => {
      if (!stream.readableEnded) log.destroyed++;
    });
    return stream;
  };
  return { open, log };
}

async function collect(chunks: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of chunks) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

const layout = tarLayout(members, MTIME);
const store = memoryStore(Object.values(CONTENTS));
const rangeOf = (l: TarLayout, start: number, end: number, contents = Object.values(CONTENTS)) =>
  collect(archiveBytes(l, archivePieces(l, start, end), memoryStore(contents).open));

async function extract(archive: Buffer) {
  const extractor = tar.extract();
  Readable.from([archive]).pipe(extractor);
  const out: Array<{ header: tar.Header; body: Buffer }> = [];
  for await (const entry of extractor)
    out.push({ header: entry.header, body: await collect(entry as AsyncIterable<Uint8Array>) });
  return out;
}

describe('ustar archives of a commit', () => {
  let full: Buffer;
  beforeAll(async () => {
    full = await collect(archiveBytes(layout, archivePieces(layout), store.open));
  });

  it('is the size the layout says: 512-byte headers, content padded to 512, two zero blocks', () => {
    expect(full.length).toBe(layout.size);
    expect(layout.size % BLOCK).toBe(0);
    expect(full.subarray(full.length - 2 * BLOCK).equals(Buffer.alloc(2 * BLOCK))).toBe(true);
  });

  it('extracts with tar-stream: every member in order, its bytes, mode 0644, uid/gid 0, empty owner names, the commit time', async () => {
    const entries = await extract(full);
    expect(entries.map((e) => e.header.name)).toEqual(Object.keys(CONTENTS));
    for (const { header, body } of entries) {
      expect(body.equals(CONTENTS[header.name]!)).toBe(true);
      expect(header).toMatchObject({ type: 'file', mode: 0o644, uid: 0, gid: 0, uname: '', gname: '' });
      expect(header.mtime!.getTime()).toBe(MTIME * 1000);
    }
  });

  it('puts a path over 100 bytes in the ustar prefix field', () => {
    const path = Object.keys(CONTENTS)[3]!;
    expect(Buffer.byteLength(path)).toBeGreaterThan(100);
    const header = ustarHeader({ path, size: 1 }, MTIME);
    expect(header.subarray(345, 345 + longDir.length).toString()).toBe(longDir);
    expect(header.subarray(0, 100).toString().replace(/\0+$/, '')).toBe(`${'f'.repeat(96)}.jpg`);
  });

  it('refuses paths ustar cannot carry or that would escape the extraction folder', () => {
    expect(() => ustarHeader({ path: `a/${'b'.repeat(254)}`, size: 0 }, MTIME)).toThrow(RefusedError);
    expect(() => ustarHeader({ path: 'x'.repeat(101), size: 0 }, MTIME)).toThrow(/cannot be split/);
    expect(() => ustarHeader({ path: `${'p'.repeat(160)}/name`, size: 0 }, MTIME)).toThrow(/cannot be split/);
    for (const path of ['/etc/passwd', '../up', 'a/../b', 'a//b', 'dir/', ''])
      expect(() => tarLayout([{ path, size: 0 }], MTIME)).toThrow(RefusedError);
    expect(() => tarLayout([{ path: 'big', size: 8 * 1024 ** 3 }], MTIME)).toThrow(/does not fit/);
  });

  it('is the same bytes every time: nothing of the host or the clock enters it', async () => {
    const again = await collect(
      archiveBytes(layout, archivePieces(layout), memoryStore(Object.values(CONTENTS)).open),
    );
    expect(sha(again)).toBe(sha(full));
  });

  it('answers any byte range with exactly those bytes of the whole archive', async () => {
    const cuts = [
      0,
      1,
      511,
      512,
      513,
      1024,
      1030,
      1535,
      1536,
      2047,
      4000,
      6000,
      layout.size - 1025,
      layout.size - 1,
    ];
    for (const start of cuts)
      for (const end of [start + 1, start + 700, start + 5000, layout.size]) {
        const part = await rangeOf(layout, start, end);
        expect({ start, end, equal: part.equals(full.subarray(start, end)) }).toEqual({
          start,
          end,
          equal: true,
        });
      }
  });

  it('a download resumed at any byte, appended to its first part, is the archive byte for byte', async () => {
    for (let cut = 0; cut <= layout.size; cut += 97) {
      const first = await rangeOf(layout, 0, cut);
      const rest = await rangeOf(layout, cut, layout.size);
      expect(Buffer.concat([first, rest]).equals(full)).toBe(true);
    }
  });

  it('opens only the members a range overlaps', async () => {
    const { open, log } = memoryStore(Object.values(CONTENTS));
    const last = layout.entries[layout.entries.length - 1]!;
    await collect(archiveBytes(layout, archivePieces(layout, last.dataOffset + 10, layout.size), open));
    expect(log.opened).toEqual([layout.entries.length - 1]);
  });

  it('fails rather than deliver a member whose stored bytes differ from the record', async () => {
    const tampered = Object.values(CONTENTS).map((b) => Buffer.from(b));
    const part = tampered[6]!;
    part[100] = part[100]! ^ 0xff;
    await expect(rangeOf(layout, 0, layout.size, tampered)).rejects.toThrow(StoredBytesMismatch);
    const short = Object.values(CONTENTS).map((b, i) => (i === 2 ? Buffer.alloc(0) : b));
    await expect(rangeOf(layout, 0, layout.size, short)).rejects.toThrow(/0 bytes where 1 were recorded/);
  });

  it('holds back the last chunk until the hash is confirmed', async () => {
    const bytes = Buffer.from('abcdefgh');
    const seen: Buffer[] = [];
    const source = Readable.from([bytes.subarray(0, 4), bytes.subarray(4)]);
    await expect(
      (async () => {
        for await (const c of checkedBytes(source, {
          what: 'f',
          length: 8,
          sha256: sha(Buffer.from('abcdefgX')),
        }))
          seen.push(Buffer.from(c));
      })(),
    ).rejects.toThrow(/differs/);
    expect(Buffer.concat(seen).toString()).toBe('abcd');
  });

  it('reads ahead a bounded number of members and releases them when the reader stops', async () => {
    const many = Array.from({ length: 40 }, (_, i) => Buffer.alloc(2000, i));
    const l = tarLayout(
      many.map((b, i) => ({ path: `f/${i}`, size: b.length })),
      MTIME,
    );
    const { open, log } = memoryStore(many);
    const bytes = archiveBytes(l, archivePieces(l), open, { lookahead: 3 });
    await bytes.next();
    expect(log.opened.length).toBeLessThanOrEqual(3);
    await bytes.return(undefined);
    await new Promise((r) => setImmediate(r));
    expect(log.opened.length).toBeLessThanOrEqual(3);
    expect(log.destroyed).toBe(log.opened.length);
  });
});

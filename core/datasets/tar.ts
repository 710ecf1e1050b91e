import { createHash } from 'node:crypto';
import { RefusedError } from '../errors';

/**
 * POSIX ustar archives of dataset commits (docs/datasets-release.md). Every byte of an archive
 * follows from the member list alone — headers carry only the path, the size and the commit's
 * time, never the host's owner, umask or clock — so the same commit always yields the same bytes,
 * a byte range can be computed without reading what comes before it, and a resumed download
 * concatenates into exactly the archive a single download would have given.
 */

export const BLOCK = 512;
/** Two zero blocks end an archive. */
const TRAILER = 2 * BLOCK;
/** The size and mtime fields hold 11 octal digits. */
const MAX_OCTAL_11 = 0o77777777777;
const ZEROS = Buffer.alloc(TRAILER);

export interface TarMember {
  /** Relative path inside the archive, `/`-separated. */
  path: string;
  size: number;
  /**
   * SHA-256 the member's bytes must have: a stored file that no longer matches its certificate
   * fails the archive instead of reaching the caller.
   */
  sha256?: string;
  /** How a failure names the member's stored file, when that is not its archive path. */
  source?: string;
}

export interface TarEntry extends TarMember {
  headerOffset: number;
  dataOffset: number;
  /** Offset of the next header: the data padded to a whole block. */
  end: number;
}

export interface TarLayout {
  entries: TarEntry[];
  /** Modification time of every member, seconds since the epoch. */
  mtime: number;
  /** Bytes of the whole archive, trailer included. */
  size: number;
}

const padded = (size: number): number => Math.ceil(size / BLOCK) * BLOCK;

function octal(value: number, width: number, what: string): string {
  if (!Number.isSafeInteger(value) || value < 0 || value > MAX_OCTAL_11)
    throw new RefusedError(`${what} ${value} does not fit a ustar header`);
  return value.toString(8).padStart(width - 1, '0');
}

/**
 * The ustar name and prefix of a path: a path over 100 bytes is split at a `/` into a prefix of at
 * most 155 bytes and a name of at most 100. Absolute paths and `..` segments are refused, so an
 * extracted archive cannot write outside its folder.
 */
export function ustarPath(path: string): { name: Buffer; prefix: Buffer } {
  const bytes = Buffer.from(path, 'utf8');
  const segments = path.split('/');
  if (!path || path.includes('\0') || path.startsWith('/') || segments.some((s) => s === '..' || s === ''))
    throw new RefusedError(`archive member path ${JSON.stringify(path)} is not a plain relative path`);
  if (bytes.length <= 100) return { name: bytes, prefix: Buffer.alloc(0) };
  if (bytes.length > 255)
    throw new RefusedError(`archive member path of ${bytes.length} bytes exceeds ustar's 255: ${path}`);
  // The first `/` that leaves a name of at most 100 bytes; a `/` byte never occurs inside a UTF-8 sequence.
  for (let i = bytes.indexOf(0x2f); i !== -1; i = bytes.indexOf(0x2f, i + 1)) {
    if (bytes.length - i - 1 <= 100) {
      if (i > 155) break;
      return { name: bytes.subarray(i + 1), prefix: bytes.subarray(0, i) };
    }
  }
  throw new RefusedError(`archive member path cannot be split into a ustar prefix and name: ${path}`);
}

/** The 512-byte ustar header of a regular file, mode 0644, owned by uid/gid 0 with empty names. */
export function ustarHeader(member: Pick<TarMember, 'path' | 'size'>, mtime: number): Buffer {
  const { name, prefix } = ustarPath(member.path);
  const header = Buffer.alloc(BLOCK);
  name.copy(header, 0);
  header.write('0000644\0', 100, 'latin1');
  header.write('0000000\0', 108, 'latin1');
  header.write('0000000\0', 116, 'latin1');
  header.write(`${octal(member.size, 12, 'size')}\0`, 124, 'latin1');
  header.write(`${octal(mtime, 12, 'mtime')}\0`, 136, 'latin1');
  header.write('0', 156, 'latin1');
  header.write('ustar\0', 257, 'latin1');
  header.write('00', 263, 'latin1');
  header.write('0000000\0', 329, 'latin1');
  header.write('0000000\0', 337, 'latin1');
  prefix.copy(header, 345);
  // The checksum is summed with its own field read as eight spaces.
  header.fill(0x20, 148, 156);
  let sum = 0;
  for (const byte of header) sum += byte;
  header.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return header;
}

export function tarLayout(members: readonly TarMember[], mtime: number): TarLayout {
  let offset = 0;
  const entries = members.map((m): TarEntry => {
    // Fail on an unrepresentable member before a byte is sent, not in the middle of the stream.
    ustarPath(m.path);
    octal(m.size, 12, 'size');
    const entry = {
      ...m,
      headerOffset: offset,
      dataOffset: offset + BLOCK,
      end: offset + BLOCK + padded(m.size),
    };
    offset = entry.end;
    return entry;
  });
  octal(mtime, 12, 'mtime');
  return { entries, mtime, size: offset + TRAILER };
}

/** A run of archive bytes: computed in place (headers, padding, trailer) or a range of a member's content. */
export type ArchivePiece =
  { kind: 'bytes'; bytes: Buffer } | { kind: 'member'; index: number; offset: number; length: number };

/** The pieces of archive bytes [start, end), lazily: a commit of many files never has all its headers in memory. */
export function* archivePieces(layout: TarLayout, start = 0, end = layout.size): Generator<ArchivePiece> {
  start = Math.max(0, start);
  end = Math.min(layout.size, end);
  if (start >= end) return;
  const { entries } = layout;
  // The last entry that begins at or before `start`.
  let lo = 0;
  let hi = entries.length - 1;
  let first = entries.length;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (entries[mid]!.headerOffset <= start) {
      first = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  if (first === entries.length) first = 0;
  const clip = (from: number, to: number) => ({ from: Math.max(from, start), to: Math.min(to, end) });
  for (let index = first; index < entries.length; index++) {
    const e = entries[index]!;
    if (e.headerOffset >= end) return;
    const header = clip(e.headerOffset, e.dataOffset);
    if (header.from < header.to)
      yield {
        kind: 'bytes',
        bytes: ustarHeader(e, layout.mtime).subarray(
          header.from - e.headerOffset,
          header.to - e.headerOffset,
        ),
      };
    const data = clip(e.dataOffset, e.dataOffset + e.size);
    if (data.from < data.to)
      yield { kind: 'member', index, offset: data.from - e.dataOffset, length: data.to - data.from };
    const padding = clip(e.dataOffset + e.size, e.end);
    if (padding.from < padding.to)
      yield { kind: 'bytes', bytes: ZEROS.subarray(0, padding.to - padding.from) };
  }
  const trailer = clip(layout.size - TRAILER, layout.size);
  if (trailer.from < trailer.to) yield { kind: 'bytes', bytes: ZEROS.subarray(0, trailer.to - trailer.from) };
}

/** A member's bytes as the store hands them out: a Node stream is one, and is destroyed when left unread. */
export interface ByteSource extends AsyncIterable<Uint8Array> {
  destroy?(error?: Error): void;
}

/** Opens `length` bytes of member `index` from `offset`. */
export type OpenMember = (index: number, offset: number, length: number) => Promise<ByteSource>;

/** A stored file that is not the file its commit recorded. */
export class StoredBytesMismatch extends Error {
  override name = 'StoredBytesMismatch';
}

/**
 * Passes `source` through, refusing it unless it is exactly `length` bytes (and, when `sha256` is
 * given, hashes to it). The last chunk is held back until the check passes, so a caller never
 * receives a complete copy of a file that disagrees with its record.
 */
export async function* checkedBytes(
  source: ByteSource,
  expect: { what: string; length: number; sha256?: string },
): AsyncGenerator<Uint8Array> {
  const hash = expect.sha256 ? createHash('sha256') : undefined;
  let got = 0;
  let held: Uint8Array | undefined;
  for await (const chunk of source) {
    got += chunk.length;
    if (got > expect.length)
      throw new StoredBytesMismatch(`${expect.what}: more than the recorded ${expect.length} bytes`);
    hash?.update(chunk);
    if (held) yield held;
    held = chunk;
  }
  if (got !== expect.length)
    throw new StoredBytesMismatch(`${expect.what}: ${got} bytes where ${expect.length} were recorded`);
  if (hash && hash.digest('hex') !== expect.sha256)
    throw new StoredBytesMismatch(`${expect.what}: content differs from its recorded SHA-256`);
  if (held) yield held;
}

/**
 * The archive bytes of `pieces`, reading member content through `open`. Up to `lookahead` member
 * reads are opened ahead of the one being sent, so the latency of one store request per file
 * overlaps the transfer of the previous ones; each unread source holds at most its stream buffer.
 */
export async function* archiveBytes(
  layout: TarLayout,
  pieces: Iterable<ArchivePiece>,
  open: OpenMember,
  opts: { lookahead?: number } = {},
): AsyncGenerator<Uint8Array> {
  const lookahead = Math.max(1, opts.lookahead ?? 4);
  const upcoming = pieces[Symbol.iterator]();
  const queue: Array<{ piece: ArchivePiece; source?: Promise<ByteSource> }> = [];
  let opened = 0;
  let exhausted = false;
  const fill = () => {
    // Bounded in pieces too: a run of empty members is all headers and would otherwise be queued whole.
    while (!exhausted && opened < lookahead && queue.length < lookahead * 4) {
      const next = upcoming.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      const piece = next.value;
      if (piece.kind === 'bytes') {
        queue.push({ piece });
        continue;
      }
      const source = open(piece.index, piece.offset, piece.length);
      // Handled where it is awaited; until then an early failure must not count as unhandled.
      source.catch(() => undefined);
      queue.push({ piece, source });
      opened++;
    }
  };
  try {
    for (fill(); queue.length; fill()) {
      const { piece, source } = queue.shift()!;
      if (piece.kind === 'bytes') {
        yield piece.bytes;
        continue;
      }
      opened--;
      const entry = layout.entries[piece.index]!;
      const whole = piece.offset === 0 && piece.length === entry.size;
      yield* checkedBytes(await source!, {
        what: entry.source ?? entry.path,
        length: piece.length,
        sha256: whole ? entry.sha256 : undefined,
      });
    }
  } finally {
    // Sources opened ahead and never read: release their connections.
    for (const { source } of queue)
      void source?.then(
        (s) => s.destroy?.(),
        () => undefined,
      );
  }
}

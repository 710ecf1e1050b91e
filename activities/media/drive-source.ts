import fs from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { DriveRefusedError } from '../../core/media/errors';
import type { ObjectStore } from '../storage/object-store';

/** Where a drive's bytes are: an object in the uploads bucket, or a server path an admin allowed. */
export type DriveSource =
  { type: 'upload'; uploadId: string; bucket: string; key: string } | { type: 'path'; path: string };

/** Random access to one file of a drive, for readers that need an index at its end (bags, zips). */
export interface RandomAccess {
  size: number;
  read(offset: number, length: number): Promise<Buffer>;
  /** A stream of [start, end) — yauzl reads entries this way. */
  stream(start: number, end: number): Readable;
  close(): Promise<void>;
}

async function collect(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const part of stream) parts.push(part as Buffer);
  return Buffer.concat(parts);
}

export async function openObjectAccess(
  storage: ObjectStore,
  bucket: string,
  key: string,
): Promise<RandomAccess> {
  const stat = await storage.client.statObject(bucket, key);
  return {
    size: stat.size,
    async read(offset, length) {
      if (length <= 0) return Buffer.alloc(0);
      return collect(await storage.client.getPartialObject(bucket, key, offset, length));
    },
    stream(start, end) {
      const out = new PassThrough();
      if (end <= start) {
        out.end();
        return out;
      }
      storage.client.getPartialObject(bucket, key, start, end - start).then(
        (s) => s.on('error', (err) => out.destroy(err)).pipe(out),
        (err: Error) => out.destroy(err),
      );
      return out;
    },
    close: async () => undefined,
  };
}

export async function openFileAccess(file: string): Promise<RandomAccess> {
  const handle = await fs.promises.open(file, 'r');
  const { size } = await handle.stat();
  return {
    size,
    async read(offset, length) {
      const buf = Buffer.alloc(Math.max(0, Math.min(length, size - offset)));
      if (buf.length) await handle.read(buf, 0, buf.length, offset);
      return buf;
    },
    stream: (start, end) => fs.createReadStream(file, { start, end: end - 1 }),
    close: () => handle.close(),
  };
}

/** Opens the single file of a drive; a folder source has none (its frames are files). */
export async function openDriveFile(storage: ObjectStore, source: DriveSource): Promise<RandomAccess> {
  if (source.type === 'upload') return openObjectAccess(storage, source.bucket, source.key);
  return openFileAccess(source.path);
}

export async function isFolder(source: DriveSource): Promise<boolean> {
  if (source.type !== 'path') return false;
  const stat = await fs.promises.stat(source.path).catch(() => {
    throw new DriveRefusedError(`server path ${source.path} does not exist`);
  });
  return stat.isDirectory();
}

/** What ffmpeg reads: a presigned URL (ffmpeg seeks in it with range requests) or the path itself. */
export async function ffmpegInput(storage: ObjectStore, source: DriveSource): Promise<string> {
  if (source.type === 'path') return source.path;
  return storage.client.presignedGetObject(source.bucket, source.key, 6 * 3600);
}

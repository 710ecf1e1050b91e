import { createHash } from 'node:crypto';
import { PassThrough } from 'node:stream';
import type { CommitFile } from '../../core/datasets/manifest';
import type { AppConfig } from '../../core/config';
import { isMissingObject, readObject } from '../inspector/frame-objects';
import { createMinioClient, type ObjectStore } from '../storage/object-store';

/**
 * Part size of streamed uploads (the COCO files): minio-js buffers a whole part in memory, and
 * without a size it would size parts for a 5 TiB object (over 512 MiB each). 8 MiB parts keep the
 * memory small and allow objects up to 80 GiB.
 */
const STREAM_PART_SIZE = 8 * 1024 * 1024;

/** Writes of an export into the exports bucket, each returning what the manifest records of it. */
export function createExportStore(storage: ObjectStore, config: AppConfig['storage']) {
  const bucket = storage.bucket('exports');
  const client = storage.client;
  const streaming = createMinioClient(config, { partSize: STREAM_PART_SIZE });

  return {
    bucket,
    async put(key: string, path: string, body: Buffer | string, contentType: string): Promise<CommitFile> {
      const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
      await client.putObject(bucket, key, bytes, bytes.length, { 'Content-Type': contentType });
      return { path, sha256: createHash('sha256').update(bytes).digest('hex'), size: bytes.length };
    },
    /** An object of the exports bucket, or null when it does not exist (a page that wrote no part). */
    async getOrNull(key: string): Promise<Buffer | null> {
      try {
        return await readObject(storage, { bucket, key });
      } catch (err) {
        if (isMissingObject(err)) return null;
        throw err;
      }
    },
    /** An object's bytes as they arrive (never whole in memory), or null when it does not exist. */
    async chunksOrNull(key: string): Promise<AsyncIterable<Buffer> | null> {
      try {
        return (await client.getObject(bucket, key)) as AsyncIterable<Buffer>;
      } catch (err) {
        if (isMissingObject(err)) return null;
        throw err;
      }
    },
    /**
     * Streams pieces into one object, hashing on the way: `write` is called with a function that
     * appends, so the whole object is never in memory.
     */
    async stream(
      key: string,
      path: string,
      contentType: string,
      write: (append: (chunk: string | Buffer) => Promise<void>) => Promise<void>,
    ): Promise<CommitFile> {
      const body = new PassThrough();
      const hash = createHash('sha256');
      let size = 0;
      const upload = streaming.putObject(bucket, key, body, undefined, { 'Content-Type': contentType });
      const append = async (chunk: string | Buffer) => {
        const bytes = typeof chunk === 'string' ? Buffer.from(chunk, 'utf8') : chunk;
        if (!bytes.length) return;
        hash.update(bytes);
        size += bytes.length;
        if (!body.write(bytes)) await new Promise<void>((resolve) => body.once('drain', resolve));
      };
      try {
        await write(append);
        body.end();
      } catch (err) {
        body.destroy(err as Error);
        await upload.catch(() => undefined);
        throw err;
      }
      await upload;
      return { path, sha256: hash.digest('hex'), size };
    },
    async removePrefix(prefix: string): Promise<void> {
      const keys: string[] = [];
      for await (const item of client.listObjectsV2(bucket, prefix, true) as AsyncIterable<{ name?: string }>)
        if (item.name) keys.push(item.name);
      for (let i = 0; i < keys.length; i += 1000) await client.removeObjects(bucket, keys.slice(i, i + 1000));
    },
  };
}

export type ExportStore = ReturnType<typeof createExportStore>;

import type { ObjectStore } from '../storage/object-store';

/**
 * Mask polygons live in the masks bucket, one JSON blob per object version:
 * `objects/<object_id>/v<version>.json` holding `{object_id, version, polygons}`, referenced by
 * the object's `mask_uri` as `s3://<bucket>/<key>`. A new version is written under a new key and
 * the old blob removed only after the database points at the new one, so a failed write never
 * leaves an object pointing at a missing or half-written mask.
 */
export interface MaskDoc {
  object_id: string;
  version: number;
  polygons: number[][];
}

export function maskKey(objectId: string, version: number): string {
  return `objects/${objectId}/v${version}.json`;
}

export function parseS3Uri(uri: string): { bucket: string; key: string } | null {
  const m = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  return m ? { bucket: m[1]!, key: m[2]! } : null;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream)
    chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}

export function createMaskStore(storage: ObjectStore) {
  const bucket = storage.bucket('masks');
  return {
    /** Writes the blob and returns its URI. */
    async put(doc: MaskDoc): Promise<string> {
      const key = maskKey(doc.object_id, doc.version);
      const body = Buffer.from(JSON.stringify(doc));
      await storage.client.putObject(bucket, key, body, body.length, { 'Content-Type': 'application/json' });
      return `s3://${bucket}/${key}`;
    },
    async read(uri: string): Promise<MaskDoc> {
      const loc = parseS3Uri(uri);
      if (!loc) throw new Error(`not a mask URI: ${uri}`);
      return JSON.parse(
        (await readAll(await storage.client.getObject(loc.bucket, loc.key))).toString('utf8'),
      ) as MaskDoc;
    },
    /** Removes blobs; missing ones are fine (a retried cleanup). */
    async remove(uris: ReadonlyArray<string | null | undefined>): Promise<void> {
      const keys = uris
        .map((u) => (u ? parseS3Uri(u) : null))
        .filter((l): l is { bucket: string; key: string } => l !== null && l.bucket === bucket)
        .map((l) => l.key);
      for (let i = 0; i < keys.length; i += 1000)
        await storage.client.removeObjects(bucket, keys.slice(i, i + 1000));
    },
  };
}

export type MaskStore = ReturnType<typeof createMaskStore>;

/**
 * Writes blobs, runs the database write, and removes the blobs again when that write fails, so no
 * blob outlives a failed request.
 */
export async function withNewMasks<T>(
  masks: MaskStore,
  docs: readonly MaskDoc[],
  write: (uris: Map<string, string>) => Promise<T>,
): Promise<T> {
  const uris = new Map<string, string>();
  try {
    for (const doc of docs) uris.set(doc.object_id, await masks.put(doc));
    return await write(uris);
  } catch (err) {
    await masks.remove([...uris.values()]);
    throw err;
  }
}

import type { ObjectStore } from '../storage/object-store';

const EXTENSIONS: Record<string, string> = { 'image/jpeg': 'jpg', 'image/png': 'png', 'image/webp': 'webp' };

/**
 * A frame's object key, the same in the frames bucket (original) and the frames-redacted bucket
 * (redacted copy): `<session_id>/<seq>.<ext>`, seq being its position among extracted frames.
 */
export const frameObjectKey = (sessionId: string, seq: number, contentType: string): string =>
  `${sessionId}/${String(seq).padStart(6, '0')}.${EXTENSIONS[contentType] ?? 'img'}`;

export async function listKeys(storage: ObjectStore, bucket: string, prefix: string): Promise<string[]> {
  const keys: string[] = [];
  for await (const item of storage.client.listObjects(bucket, prefix, true))
    if (item.name) keys.push(item.name);
  return keys;
}

export async function removeKeys(
  storage: ObjectStore,
  bucket: string,
  keys: readonly string[],
): Promise<void> {
  for (let i = 0; i < keys.length; i += 1000)
    await storage.client.removeObjects(bucket, keys.slice(i, i + 1000));
}

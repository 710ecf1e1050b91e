import { sourceCopyKey } from '../../core/sources/ingest';
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

/**
 * Removes the session's copy of a source object (docs/ingest.md "From a registered source"): the
 * object, and the parts of a multipart copy a crashed attempt left unfinished. Ends every ingest,
 * completed or failed; a session that had no copy has nothing to remove.
 */
export async function removeSourceCopy(storage: ObjectStore, sessionId: string): Promise<void> {
  const bucket = storage.bucket('uploads');
  const key = sourceCopyKey(sessionId);
  await storage.client.removeObject(bucket, key);
  // Each crashed attempt may have left one. MinIO lists them by exact key only, and the client's
  // listIncompleteUploads stream drops a key's uploads when there are several: one page at a time.
  let page = await storage.client.listIncompleteUploadsQuery(bucket, key, '', '', '');
  for (;;) {
    for (const upload of page.uploads)
      if (upload.key === key) await storage.client.abortMultipartUpload(bucket, key, upload.uploadId);
    if (!page.isTruncated) return;
    page = await storage.client.listIncompleteUploadsQuery(
      bucket,
      key,
      page.nextKeyMarker,
      page.nextUploadIdMarker,
      '',
    );
  }
}

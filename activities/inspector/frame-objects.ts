import type { BucketRole, ObjectStore } from '../storage/object-store';

/**
 * Where a stored blob lives. Rows name blobs either as `s3://<bucket>/<key>` or as a bare key in
 * the bucket of their role (frames for `frames.uri`, redacted for `frames.redacted_uri`).
 */
export interface ObjectLocation {
  bucket: string;
  key: string;
}

export function objectLocation(storage: ObjectStore, uri: string, role: BucketRole): ObjectLocation {
  const match = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri);
  if (match) return { bucket: match[1]!, key: match[2]! };
  return { bucket: storage.bucket(role), key: uri.replace(/^\/+/, '') };
}

/** MinIO's answer for an absent object or bucket. */
export function isMissingObject(err: unknown): boolean {
  const code = (err as { code?: string } | null)?.code;
  return code === 'NoSuchKey' || code === 'NotFound' || code === 'NoSuchBucket';
}

export async function readObject(storage: ObjectStore, at: ObjectLocation): Promise<Buffer> {
  const stream = await storage.client.getObject(at.bucket, at.key);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

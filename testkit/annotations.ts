import { randomUUID } from 'node:crypto';
import sharp from 'sharp';
import type { AppDeps } from '../api/deps';
import { createMaskStore, parseS3Uri } from '../activities/annotations/masks';

/**
 * Sessions and frames made directly in the database (ingest is built apart), each frame with a
 * real JPEG in the frames bucket: a left-to-right gradient with a white square at a known place,
 * so crops can be checked by their pixels.
 */
export async function createFrame(
  deps: Pick<AppDeps, 'db' | 'storage'>,
  opts: { width?: number; height?: number; sessionId?: string } = {},
) {
  const width = opts.width ?? 640;
  const height = opts.height ?? 360;
  const sessionId =
    opts.sessionId ??
    (
      await deps.db.session.create({
        data: { name: `test drive ${randomUUID().slice(0, 8)}`, sourceKind: 'frames' },
      })
    ).id;
  const index = await deps.db.frame.count({ where: { sessionId } });
  const raw = Buffer.alloc(width * height * 3);
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const inSquare = x >= 100 && x < 200 && y >= 100 && y < 200;
      const v = inSquare ? 255 : Math.round((x / width) * 120);
      raw.fill(v, (y * width + x) * 3, (y * width + x) * 3 + 3);
    }
  }
  const jpeg = await sharp(raw, { raw: { width, height, channels: 3 } })
    .jpeg()
    .toBuffer();
  const key = `test/${randomUUID()}.jpg`;
  const bucket = deps.storage.bucket('frames');
  await deps.storage.client.putObject(bucket, key, jpeg, jpeg.length, { 'Content-Type': 'image/jpeg' });
  const frame = await deps.db.frame.create({
    data: { sessionId, index, timestampMs: index * 333, width, height, uri: `s3://${bucket}/${key}` },
  });
  return { frame, sessionId };
}

/** Keys under a prefix of the masks bucket. */
export async function maskKeys(deps: Pick<AppDeps, 'storage'>, prefix = 'objects/'): Promise<string[]> {
  const keys: string[] = [];
  const stream = deps.storage.client.listObjectsV2(deps.storage.bucket('masks'), prefix, true);
  for await (const item of stream)
    if ((item as { name?: string }).name) keys.push((item as { name: string }).name);
  return keys;
}

/** Removes the blobs this test database's objects and frames left in MinIO (the database is dropped). */
export async function removeTestBlobs(deps: Pick<AppDeps, 'db' | 'storage'>): Promise<void> {
  const objects = await deps.db.annoObject.findMany({
    where: { maskUri: { not: null } },
    select: { maskUri: true },
  });
  await createMaskStore(deps.storage).remove(objects.map((o) => o.maskUri));
  const frames = await deps.db.frame.findMany({ select: { uri: true } });
  const keys = frames
    .map((f) => parseS3Uri(f.uri))
    .filter((l) => l?.bucket === deps.storage.bucket('frames'))
    .map((l) => l!.key);
  if (keys.length) await deps.storage.client.removeObjects(deps.storage.bucket('frames'), keys);
}

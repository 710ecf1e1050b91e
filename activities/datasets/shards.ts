import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import { ConflictError, RefusedError } from '../../core/errors';
import type { CommitFile } from '../../core/datasets/manifest';
import { StoredBytesMismatch, archiveBytes, archivePieces, tarLayout } from '../../core/datasets/tar';
import type { FrameRow, ObjectRow } from '../../core/export/parquet-tables';
import type { DatasetCommit, Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { commitFiles, commitParts, readTable } from './read';
import { commitKey, openStored } from './transfer';

/**
 * WebDataset-style tar shards of a commit (docs/datasets-release.md): per frame of a split, in
 * the commit's file order, `<frame_id>.jpg` (the redacted image) and `<frame_id>.json` (the frame
 * and its objects from the commit's Parquet tables). Shards are derived data: they sit beside the
 * commit under `<prefix>shards/`, are recorded in the commit's `shards` column and are not part
 * of its immutable, signed file list. Their bytes follow from the commit, the split and the shard
 * size alone, so writing them again gives the same objects.
 *
 * Written synchronously within the request, up to MAX_SHARD_SAMPLES frames: the work is one read
 * of each image and one write of each byte, bounded by the cap, and the caller wants the shard list.
 */

export const MAX_SHARD_SAMPLES = 20_000;
/** How long the write may hold its lock; well above what MAX_SHARD_SAMPLES images take to copy. */
const SHARDS_TIMEOUT_MS = 15 * 60_000;

export interface ShardRecord {
  path: string;
  sha256: string;
  size: number;
  samples: number;
}

const OBJECT_COLUMNS = [
  'object_id',
  'frame_id',
  'session_id',
  'frame_index',
  'timestamp_ms',
  'class_id',
  'class_name',
  'l0',
  'l1',
  'x1',
  'y1',
  'x2',
  'y2',
  'rot_deg',
  'rbox',
  'polyline',
  'mask_polygons',
  'keypoints',
  'cuboid_3d',
  'attrs',
  'conf',
  'source',
  'state',
  'version',
  'track_id',
] as const satisfies ReadonlyArray<keyof ObjectRow>;
type SampleObjectRow = Pick<ObjectRow, (typeof OBJECT_COLUMNS)[number]>;

const FRAME_COLUMNS = [
  'frame_id',
  'session_id',
  'frame_index',
  'timestamp_ms',
  'width',
  'height',
  'lighting',
  'context',
] as const satisfies ReadonlyArray<keyof FrameRow>;
type SampleFrameRow = Pick<FrameRow, (typeof FRAME_COLUMNS)[number]>;

/** The Parquet tables carry list- and object-valued shapes as JSON text. */
const parsed = (text: string | null): unknown => (text === null ? null : JSON.parse(text));

function sampleObject(o: SampleObjectRow) {
  return {
    object_id: o.object_id,
    class_id: o.class_id,
    class_name: o.class_name,
    l0: o.l0,
    l1: o.l1,
    bbox: [o.x1, o.y1, o.x2, o.y2],
    rot_deg: o.rot_deg,
    rbox: parsed(o.rbox),
    polyline: parsed(o.polyline),
    mask_polygons: parsed(o.mask_polygons),
    keypoints: parsed(o.keypoints),
    cuboid_3d: parsed(o.cuboid_3d),
    attrs: parsed(o.attrs),
    conf: o.conf,
    source: o.source,
    state: o.state,
    version: o.version,
    track_id: o.track_id,
  };
}

/** The split's images, which decide the samples: `images/<split>/<frame_id>.jpg`. */
function splitImages(files: CommitFile[], split: string): Array<CommitFile & { frameId: string }> {
  const folder = `images/${split}/`;
  return files.flatMap((f) => {
    const name = f.path.slice(folder.length);
    return f.path.startsWith(folder) && name.endsWith('.jpg') && !name.includes('/')
      ? [{ ...f, frameId: name.slice(0, -'.jpg'.length) }]
      : [];
  });
}

const shardPath = (split: string, index: number): string =>
  `shards/${split}-${String(index).padStart(6, '0')}.tar`;

/** The JSON of every sample, from the commit's tables, keyed by frame id. */
async function sampleDocuments(
  storage: ObjectStore,
  commit: DatasetCommit,
  split: string,
  frameIds: Set<string>,
): Promise<Map<string, Buffer>> {
  // Row groups of other splits are skipped by their statistics; frames are matched here, since a
  // `$in` filter of thousands of ids would be a linear search per row.
  const filter = { split: { $eq: split } };
  const frames = new Map<string, SampleFrameRow>();
  for await (const rows of readTable(storage, commitParts(storage, commit, 'frames'), {
    columns: FRAME_COLUMNS,
    filter,
  }))
    for (const f of rows) if (frameIds.has(f.frame_id)) frames.set(f.frame_id, f);
  const objects = new Map<string, SampleObjectRow[]>();
  for await (const rows of readTable(storage, commitParts(storage, commit, 'objects'), {
    columns: OBJECT_COLUMNS,
    filter,
  }))
    for (const o of rows) {
      if (!frameIds.has(o.frame_id)) continue;
      const list = objects.get(o.frame_id);
      if (list) list.push(o);
      else objects.set(o.frame_id, [o]);
    }
  const documents = new Map<string, Buffer>();
  for (const frameId of frameIds) {
    const frame = frames.get(frameId);
    const own = (objects.get(frameId) ?? []).sort((a, b) => (a.object_id < b.object_id ? -1 : 1));
    const first = own[0];
    const sample = {
      commit_id: commit.commitId,
      frame_id: frameId,
      split,
      session_id: frame?.session_id ?? first?.session_id ?? null,
      frame_index: frame?.frame_index ?? first?.frame_index ?? null,
      timestamp_ms: frame?.timestamp_ms ?? first?.timestamp_ms ?? null,
      width: frame?.width ?? null,
      height: frame?.height ?? null,
      lighting: frame?.lighting ?? null,
      context: frame ? parsed(frame.context) : null,
      objects: own.map(sampleObject),
    };
    documents.set(frameId, Buffer.from(JSON.stringify(sample)));
  }
  return documents;
}

/** Streams one shard into the bucket, hashing what it sends. */
async function putShard(
  storage: ObjectStore,
  commit: DatasetCommit,
  key: string,
  samples: Array<CommitFile & { frameId: string }>,
  documents: Map<string, Buffer>,
): Promise<Omit<ShardRecord, 'path'>> {
  const members = samples.flatMap((s) => [
    { path: `${s.frameId}.jpg`, size: s.size, sha256: s.sha256, source: s.path },
    { path: `${s.frameId}.json`, size: documents.get(s.frameId)!.length },
  ]);
  const layout = tarLayout(members, Math.floor(commit.createdAt.getTime() / 1000));
  const open = async (index: number, offset: number, length: number) => {
    const sample = samples[index >> 1]!;
    return index % 2 === 0
      ? openStored(storage, commitKey(commit, sample.path), offset, length)
      : Readable.from([documents.get(sample.frameId)!.subarray(offset, offset + length)]);
  };
  const hash = createHash('sha256');
  // The MinIO client's multipart upload never settles when its source stream fails, so a failure
  // ends the stream early instead and is raised once the upload returns; the short object it
  // leaves is removed with the rest of what this write made.
  let failure: unknown;
  async function* hashed() {
    try {
      for await (const chunk of archiveBytes(layout, archivePieces(layout), open)) {
        hash.update(chunk);
        yield chunk;
      }
    } catch (err) {
      failure = err;
    }
  }
  // The client holds at most one upload part (64 MB) of it in memory.
  await storage.client.putObject(
    storage.bucket('exports'),
    key,
    Readable.from(hashed(), { objectMode: false }),
    layout.size,
    { 'Content-Type': 'application/x-tar' },
  );
  if (failure) throw failure;
  return { sha256: hash.digest('hex'), size: layout.size, samples: samples.length };
}

async function removeQuietly(storage: ObjectStore, logger: Logger, keys: string[]): Promise<void> {
  if (!keys.length) return;
  try {
    await storage.client.removeObjects(storage.bucket('exports'), keys);
  } catch (err) {
    logger.warn({ err, keys: keys.length }, 'could not remove shard objects');
  }
}

/**
 * Writes the shards of `split` and records them, replacing that split's earlier shards. One writer
 * per commit and split at a time (a transaction-scoped advisory lock; a second one is a conflict),
 * so two requests never interleave objects under the same names. The objects are written first and
 * the row updated last; when writing fails, what this call wrote is removed and, because it may
 * have overwritten them, the split's earlier shards are dropped too: the row never lists a shard
 * whose object is not the one it describes.
 */
export async function writeCommitShards(
  deps: { db: Db; storage: ObjectStore; logger: Logger },
  commit: DatasetCommit,
  opts: { split: string; samplesPerShard: number },
): Promise<ShardRecord[]> {
  const { db, storage, logger } = deps;
  const { split, samplesPerShard } = opts;
  const images = splitImages(commitFiles(commit), split);
  if (!images.length)
    throw new RefusedError(
      `commit ${commit.commitId} has no images for split '${split}' (images/${split}/*.jpg)`,
    );
  if (images.length > MAX_SHARD_SAMPLES)
    throw new RefusedError(
      `split '${split}' of commit ${commit.commitId} has ${images.length} images; shards are written for at most ${MAX_SHARD_SAMPLES} samples a split`,
    );
  const ofSplit = new RegExp(`^shards/${split}-\\d{6}\\.tar$`);

  const outcome = await db.$transaction(
    async (tx) => {
      const [{ locked }] = await tx.$queryRaw<[{ locked: boolean }]>`
        SELECT pg_try_advisory_xact_lock(hashtext(${`shards:${commit.commitId}:${split}`})) AS locked`;
      if (!locked)
        throw new ConflictError(
          `shards of split '${split}' of commit ${commit.commitId} are being written by another request`,
        );
      const current = await tx.datasetCommit.findUniqueOrThrow({
        where: { commitId: commit.commitId },
        select: { shards: true },
      });
      const recorded = (current.shards ?? []) as unknown as ShardRecord[];
      const others = recorded.filter((s) => !ofSplit.test(s.path));
      const earlier = recorded.filter((s) => ofSplit.test(s.path));
      const setShards = (shards: ShardRecord[]) =>
        tx.datasetCommit.update({
          where: { commitId: commit.commitId },
          data: { shards: shards as unknown as Prisma.InputJsonValue },
        });

      const written: string[] = [];
      try {
        const documents = await sampleDocuments(
          storage,
          commit,
          split,
          new Set(images.map((i) => i.frameId)),
        );
        const shards: ShardRecord[] = [];
        for (let start = 0; start < images.length; start += samplesPerShard) {
          const path = shardPath(split, shards.length);
          const key = commitKey(commit, path);
          written.push(key);
          shards.push({
            path,
            ...(await putShard(
              storage,
              commit,
              key,
              images.slice(start, start + samplesPerShard),
              documents,
            )),
          });
        }
        await setShards([...others, ...shards].sort((a, b) => (a.path < b.path ? -1 : 1)));
        // Shards of an earlier, larger write that the new list no longer names; removed while the
        // lock is held, so a later writer's objects of the same names are never removed.
        const kept = new Set(shards.map((n) => n.path));
        await removeQuietly(
          storage,
          logger,
          earlier.filter((e) => !kept.has(e.path)).map((e) => commitKey(commit, e.path)),
        );
        return { shards };
      } catch (err) {
        const mine = new Set(written);
        await removeQuietly(storage, logger, [
          ...written,
          ...earlier.map((e) => commitKey(commit, e.path)).filter((k) => !mine.has(k)),
        ]);
        if (earlier.length) await setShards(others);
        return {
          failed:
            err instanceof StoredBytesMismatch
              ? new ConflictError(
                  `a stored file of commit ${commit.commitId} no longer matches its record (${err.message}); GET /api/release/${commit.commitId}/verify names every such file`,
                )
              : err,
        };
      }
    },
    { maxWait: 10_000, timeout: SHARDS_TIMEOUT_MS },
  );
  if ('failed' in outcome) throw outcome.failed;
  return outcome.shards;
}

import { randomUUID } from 'node:crypto';
import type { AppDeps } from '../api/deps';
import { recordCommit } from '../activities/export/commit';
import { sha256Hex, type CommitFile } from '../core/datasets/manifest';
import {
  FRAME_COLUMNS,
  OBJECT_COLUMNS,
  parquetPart,
  partName,
  type FrameRow,
  type ObjectRow,
} from '../core/export/parquet-tables';
import type { DatasetCommit } from '../generated/prisma/client';

/** An objects-table row: the given fields over neutral defaults (a human-accepted 10 px box). */
export function objectRow(o: Partial<ObjectRow> & Pick<ObjectRow, 'object_id' | 'class_name'>): ObjectRow {
  return {
    frame_id: randomUUID(),
    session_id: randomUUID(),
    frame_index: 0,
    timestamp_ms: 0,
    split: 'train',
    class_id: 1,
    l0: 'object',
    l1: 'vehicle',
    x1: 0,
    y1: 0,
    x2: 10,
    y2: 10,
    rot_deg: 0,
    rbox: null,
    polyline: null,
    mask_uri: null,
    mask_polygons: null,
    keypoints: null,
    cuboid_3d: null,
    attrs: '{}',
    conf: null,
    source: 'human',
    state: 'accepted',
    version: 1,
    track_id: null,
    provenance: null,
    ...o,
  };
}

/**
 * A dataset commit made without running an export: real files in the exports bucket (the
 * Parquet tables from the given rows, plus any extra files) and a signed commit row, for the
 * suites of the routes that read commits.
 */
export async function createCommitFixture(
  deps: Pick<AppDeps, 'db' | 'storage' | 'config'>,
  opts: {
    name: string;
    objects: Array<Partial<ObjectRow> & Pick<ObjectRow, 'object_id' | 'class_name'>>;
    frames?: FrameRow[];
    files?: Record<string, Buffer | string>;
    sessionIds?: string[];
    modelVersions?: string[];
    createdBy?: string | null;
  },
): Promise<DatasetCommit> {
  const jobId = randomUUID();
  const prefix = `fixtures/${jobId}/`;
  const objects = opts.objects.map((o) =>
    objectRow({ session_id: opts.sessionIds?.[0] ?? randomUUID(), ...o }),
  );
  const contents: Record<string, Buffer> = {
    [partName('objects', 0)]: parquetPart(OBJECT_COLUMNS, objects),
    [partName('frames', 0)]: parquetPart(FRAME_COLUMNS, opts.frames ?? []),
  };
  for (const [path, content] of Object.entries(opts.files ?? {})) contents[path] = Buffer.from(content);
  const files: CommitFile[] = [];
  const bucket = deps.storage.bucket('exports');
  for (const [path, content] of Object.entries(contents)) {
    await deps.storage.client.putObject(bucket, `${prefix}${path}`, content, content.length);
    files.push({ path, sha256: sha256Hex(content), size: content.length });
  }
  const perClass: Record<string, number> = {};
  for (const o of objects) perClass[o.class_name] = (perClass[o.class_name] ?? 0) + 1;
  return recordCommit(deps, {
    jobId,
    name: opts.name,
    prefix,
    files,
    predicate: { states: ['accepted'] },
    split: { seed: 1, train: 0.8, val: 0.1, test: 0.1 },
    formats: ['parquet'],
    counts: { objects: objects.length, frames: opts.frames?.length ?? 0, per_class: perClass },
    gate: { mode: 'advisory', outcome: 'passed' },
    sessionIds: opts.sessionIds ?? [...new Set(objects.map((o) => o.session_id))],
    modelVersions: opts.modelVersions ?? [],
    createdBy: opts.createdBy ?? null,
  });
}

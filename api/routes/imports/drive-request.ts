import fs from 'node:fs';
import path from 'node:path';
import type { DriveRequest } from '../../../activities/media/drive';
import { readableSource, sourceLocation, statSourceObject } from '../../../activities/sources';
import { ConflictError, InputError, NotAllowedError, RefusedError } from '../../../core/errors';
import { sourceCopyKey, sourceDriveUri, sourceKeyProblem } from '../../../core/sources/ingest';
import type { IntegrationSource } from '../../../generated/prisma/client';
import { roleAtLeast, type Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import type { IngestIn } from './validators';

/** An object of a registered source that the ingest copies before reading it (docs/ingest.md). */
export interface SourceObject {
  source: IntegrationSource;
  key: string;
  /** The drive as the ingest reads it: the session's copy of the object in the uploads bucket. */
  copyFor(sessionId: string): DriveRequest;
}

/** A drive named by an IngestIn, resolved and recognised by content. */
export type ResolvedDrive = DriveFacts &
  ({ drive: DriveRequest; sourceObject?: never } | { drive?: never; sourceObject: SourceObject });

interface DriveFacts {
  /**
   * SHA-256 of the drive's bytes, known here for an upload (its hashing workflow recorded it). A
   * server path is not read in the request: null, and the ingest's first activity hashes it.
   */
  contentHash: string | null;
  /** The upload's, server file's or source object's size; null for a server folder (not walked in the request). */
  sizeBytes: number | null;
  defaultName: string;
  /** sessions.source_uri: `s3://<bucket>/<key>`, the absolute server path, or `source:<source_id>/<key>`. */
  sourceUri: string;
  /** What the job shows as its source. */
  sourceView: Record<string, string>;
}

/** Only inside an allowed root, after resolving links, so `..` and symlinks cannot leave it. */
async function allowedServerPath(deps: AppDeps, given: string): Promise<string> {
  const roots = deps.config.ingest.allowedRoots;
  if (!roots.length)
    throw new RefusedError('no server folder is allowed for ingest (APP_INGEST__ALLOWED_ROOTS is empty)');
  if (!path.isAbsolute(given))
    throw new InputError('path must be absolute', [{ field: 'body.path', message: 'not absolute' }]);
  const real = await fs.promises.realpath(given).catch(() => {
    throw new InputError(`server path ${given} does not exist`, [
      { field: 'body.path', message: 'does not exist' },
    ]);
  });
  const realRoots = await Promise.all(roots.map((r) => fs.promises.realpath(r).catch(() => null)));
  if (!realRoots.some((r) => r && (real === r || real.startsWith(r + path.sep)))) {
    throw new RefusedError(`server path ${given} is outside the folders allowed for ingest`);
  }
  return real;
}

/**
 * A source's object, checked as far as a request may: the source exists and is of a kind that can
 * be read, the key is a single object under its prefix, and the store knows it (one stat, no byte
 * read) within the size limit. Reading it is the workflow's first step.
 */
async function resolveSourceObject(
  deps: AppDeps,
  sourceId: string,
  key: string,
  options: Omit<DriveRequest, 'source'>,
): Promise<ResolvedDrive> {
  const source = await readableSource(deps.db, sourceId);
  const where = sourceLocation(source);
  const problem = sourceKeyProblem(key, where.prefix);
  if (problem) throw new InputError(problem, [{ field: 'body.key', message: problem }]);
  const { size } = await statSourceObject(deps, source, key);
  if (!size) throw new RefusedError(`object ${key} of source ${source.name} is empty: no drive to ingest`);
  const maxMb = deps.config.ingest.sourceMaxMb;
  if (size > maxMb * 1024 * 1024)
    throw new RefusedError(
      `object ${key} of source ${source.name} is ${size} bytes, over the ${maxMb} MiB an ingest copies from a source (APP_INGEST__SOURCE_MAX_MB)`,
    );
  const uploads = deps.storage.bucket('uploads');
  return {
    sourceObject: {
      source,
      key,
      copyFor: (sessionId) => ({
        ...options,
        // The copy stands where an upload would; the DriveSource's id names where it came from.
        source: {
          type: 'upload',
          uploadId: `source:${source.id}`,
          bucket: uploads,
          key: sourceCopyKey(sessionId),
        },
      }),
    },
    contentHash: null,
    sizeBytes: size,
    defaultName: path.posix.basename(key),
    sourceUri: sourceDriveUri(source.id, key),
    sourceView: { source_id: source.id, source_name: source.name, bucket: where.bucket, key },
  };
}

export async function resolveDrive(
  deps: AppDeps,
  body: IngestIn,
  principal: Principal,
): Promise<ResolvedDrive> {
  const options = { kind: body.kind, topic: body.topic, frameRate: body.frame_rate };
  if (body.source_id) return resolveSourceObject(deps, body.source_id, body.key!, options);
  if (body.upload_id) {
    const upload = await deps.db.upload.findUnique({ where: { id: body.upload_id } });
    if (!upload)
      throw new InputError(`no upload ${body.upload_id}`, [
        { field: 'body.upload_id', message: 'no such upload' },
      ]);
    if (upload.state === 'hashing')
      throw new ConflictError(
        `upload ${upload.id} is still being hashed (workflow upload-${upload.id}); ingest it once upload.hashed arrives on /api/events/jobs`,
        { upload_id: upload.id, state: upload.state, workflow_id: `upload-${upload.id}` },
      );
    if (upload.state !== 'completed' || !upload.sha256) {
      throw new InputError(`upload ${upload.id} is ${upload.state}; complete it first`, [
        { field: 'body.upload_id', message: `upload is ${upload.state}` },
      ]);
    }
    const bucket = deps.storage.bucket('uploads');
    return {
      drive: { ...options, source: { type: 'upload', uploadId: upload.id, bucket, key: upload.objectKey } },
      contentHash: upload.sha256,
      sizeBytes: Number(upload.sizeBytes ?? 0),
      defaultName: upload.filename,
      sourceUri: `s3://${bucket}/${upload.objectKey}`,
      sourceView: { upload_id: upload.id, object_key: upload.objectKey },
    };
  }
  if (!roleAtLeast(principal.role, 'admin'))
    throw new NotAllowedError('ingesting a server path needs the admin role');
  const real = await allowedServerPath(deps, body.path!);
  // Only what a stat answers: reading (hashing, probing) the drive is the workflow's first step.
  const stat = await fs.promises.stat(real);
  if (!stat.isFile() && !stat.isDirectory())
    throw new InputError(`server path ${body.path} is neither a file nor a folder`, [
      { field: 'body.path', message: 'not a file or folder' },
    ]);
  return {
    drive: { ...options, source: { type: 'path', path: real } },
    contentHash: null,
    sizeBytes: stat.isFile() ? stat.size : null,
    defaultName: path.basename(real),
    sourceUri: real,
    sourceView: { path: real },
  };
}

import type { DriveKind } from '../media/drive-format';
import { frameContentType } from '../media/frame-files';
import type { ObjectVerdict } from './preview';

/**
 * Ingesting from a registered source (docs/ingest.md "From a registered source"): which keys may
 * be named, where the platform keeps its copy while the ingest runs, and how the session records
 * where its drive came from.
 */

/** The uploads bucket's folder of source copies, one folder per session (removed when its ingest ends). */
export const SOURCE_COPY_PREFIX = 'source-copies/';

export const sourceCopyPrefix = (sessionId: string): string => `${SOURCE_COPY_PREFIX}${sessionId}/`;

/**
 * The copy's key, named by the session alone: a retried copy lands on the same key, and the end of
 * the ingest finds it (and an unfinished multipart copy of it: MinIO lists those by exact key
 * only) without knowing where it came from. No extension is needed: the ingest recognises bags and
 * zips by their first bytes and leaves videos to ffprobe.
 */
export const sourceCopyKey = (sessionId: string): string => `${sourceCopyPrefix(sessionId)}drive`;

/**
 * sessions.source_uri of a drive ingested from a source. Not an `s3://` URI: the bucket is not
 * one of the platform's, and readers of source_uri (the inspector) must not take it for one.
 */
export const sourceDriveUri = (sourceId: string, key: string): string => `source:${sourceId}/${key}`;

/**
 * Why `key` cannot be ingested from a source whose prefix is `prefix`, or null. Judged on the
 * key alone, before the store is asked: a folder, a loose frame, dot segments, outside the prefix.
 */
export function sourceKeyProblem(key: string, prefix: string): string | null {
  if (!key.startsWith(prefix)) return `key ${key} is outside the source's prefix "${prefix}"`;
  if (key.endsWith('/'))
    return `key ${key} names a folder: a folder of loose frames is not ingested from a source; name one object (a video, a bag or a zip of frames)`;
  // S3 keys are literal, but some S3-compatible stores resolve dot segments: never let one climb out.
  if (key.split('/').some((s) => s === '.' || s === '..' || s === ''))
    return `key ${key} has an empty, "." or ".." segment`;
  if (frameContentType(key))
    return `key ${key} is one frame image: a folder of loose frames is not ingested from a source; zip the frames and name the zip`;
  return null;
}

/**
 * Why an object judged `verdict` (by its first bytes, as the preview judges it) would be refused
 * when declared as `kind`, or null. Videos are left to ffprobe at ingest time, as in the preview.
 */
export function sourceVerdictProblem(kind: DriveKind, verdict: ObjectVerdict): string | null {
  if (verdict.ingest_kind === null)
    return `the object is not a drive the ingest takes (${verdict.format ?? 'unrecognised'})`;
  if (verdict.ingest_kind !== kind)
    return `declared as kind "${kind}" but the object is ${verdict.format} (kind "${verdict.ingest_kind}")`;
  return null;
}

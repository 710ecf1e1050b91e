import type { Upload } from '../../../generated/prisma/client';
import { ConflictError, InputError, NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';

/** minio declares S3 ListParts protected; it is the plain S3 call a resuming client needs. */
interface PartLister {
  listParts(
    bucket: string,
    key: string,
    uploadId: string,
  ): Promise<Array<{ part: number; etag: string; size: number }>>;
}

export interface StoredPart {
  part_number: number;
  etag: string;
  size: number;
}

export async function listStoredParts(deps: AppDeps, upload: Upload): Promise<StoredPart[]> {
  const parts = await (deps.storage.client as unknown as PartLister).listParts(
    deps.storage.bucket('uploads'),
    upload.objectKey,
    upload.multipartId!,
  );
  return parts
    .map((p) => ({ part_number: p.part, etag: p.etag.replace(/"/g, ''), size: p.size }))
    .sort((a, b) => a.part_number - b.part_number);
}

/** Object keys keep the file name readable (and its extension, which viewers look at) but safe. */
export const uploadObjectKey = (uploadId: string, filename: string): string =>
  `${uploadId}/${
    filename
      .split(/[\\/]/)
      .pop()!
      .replace(/[^A-Za-z0-9._-]/g, '_')
      .replace(/^\.+/, '_') || 'drive'
  }`;

export async function findUpload(deps: AppDeps, id: string, want?: 'open'): Promise<Upload> {
  const upload = await deps.db.upload.findUnique({ where: { id } });
  if (!upload) throw new NotFoundError(`no upload ${id}`);
  if (want === 'open' && upload.state !== 'open')
    throw new ConflictError(`upload ${id} is ${upload.state}`, { upload_id: id, state: upload.state });
  return upload;
}

export function uploadOut(u: Upload) {
  return {
    upload_id: u.id,
    object_key: u.objectKey,
    mode: u.multipartId ? 'multipart' : 'single',
    filename: u.filename,
    content_type: u.contentType,
    state: u.state,
    declared_size: u.declaredSize === null ? null : Number(u.declaredSize),
    size: u.sizeBytes === null ? null : Number(u.sizeBytes),
    sha256: u.sha256,
    part_size: u.partSize,
    created_at: u.createdAt.toISOString(),
    completed_at: u.completedAt?.toISOString() ?? null,
  };
}

/** Parts named by the client must be the ones the store holds, with the same ETags. */
export function checkNamedParts(
  named: Array<{ part_number: number; etag: string }>,
  stored: StoredPart[],
): StoredPart[] {
  const byNumber = new Map(stored.map((p) => [p.part_number, p]));
  const chosen: StoredPart[] = [];
  for (const [i, p] of named.entries()) {
    const have = byNumber.get(p.part_number);
    if (!have)
      throw new InputError(`part ${p.part_number} was never received; upload it again`, [
        { field: `body.parts.${i}`, message: 'not received' },
      ]);
    if (have.etag !== p.etag.replace(/"/g, ''))
      throw new InputError(`part ${p.part_number}'s ETag does not match what the store received`, [
        { field: `body.parts.${i}.etag`, message: 'mismatch' },
      ]);
    chosen.push(have);
  }
  return chosen.sort((a, b) => a.part_number - b.part_number);
}

import { createHash } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import type { Upload } from '../../generated/prisma/client';
import type { ActivityDeps } from '../deps';
import { recordAudit } from '../audit';
import { isMissingObject } from '../inspector/frame-objects';
import { throttled } from '../ingest/progress';

/** What UploadHashWorkflow (`upload-<upload_id>`) is started with. */
export interface UploadHashInput {
  uploadId: string;
}

const PROGRESS_MS = 1000;

/** UploadHashWorkflow's business id. */
export const uploadHashWorkflowId = (uploadId: string): string => `upload-${uploadId}`;

type Tx = Parameters<Parameters<ActivityDeps['db']['$transaction']>[0]>[0];

/**
 * Moves an upload from one state to the next, with its audit entry, only if it is still in `from`:
 * of two racing moves one wins and the other changes nothing. True when this call moved it.
 */
export async function advanceUpload(
  tx: Tx,
  move: {
    id: string;
    from: string;
    data: Parameters<Tx['upload']['updateMany']>[0]['data'];
    audit: Omit<Parameters<typeof recordAudit>[1], 'subjectType' | 'subjectId'>;
  },
): Promise<boolean> {
  const { count } = await tx.upload.updateMany({ where: { id: move.id, state: move.from }, data: move.data });
  if (count) await recordAudit(tx, { ...move.audit, subjectType: 'upload', subjectId: move.id });
  return count > 0;
}

/** An upload as the jobs stream shows it while it is hashed (the upload routes' fields, in brief). */
export function uploadEvent(u: Upload, extra: Record<string, unknown> = {}) {
  return {
    upload_id: u.id,
    workflow_id: uploadHashWorkflowId(u.id),
    object_key: u.objectKey,
    filename: u.filename,
    state: u.state,
    size: u.sizeBytes === null ? null : Number(u.sizeBytes),
    sha256: u.sha256,
    completed_at: u.completedAt?.toISOString() ?? null,
    ...extra,
  };
}

/**
 * The upload's hashing, off the request: `POST /api/upload/complete` assembles the drive and
 * leaves the upload `hashing`; this reads the stored object once, records its SHA-256 (the drive's
 * identity for ingest) and makes the upload `completed`. Progress and the end go on the `jobs`
 * stream (`upload.progress`, `upload.hashed`, `upload.failed`).
 */
export function createUploadActivities(deps: ActivityDeps) {
  const { db, storage, events } = deps;
  const bucket = storage.bucket('uploads');

  return {
    /** Hashes the assembled drive (heartbeating) and completes the upload; idempotent. */
    hashUpload: async (input: UploadHashInput): Promise<{ sha256: string; size: number }> => {
      const upload = await db.upload.findUniqueOrThrow({ where: { id: input.uploadId } });
      if (upload.state === 'completed' && upload.sha256)
        return { sha256: upload.sha256, size: Number(upload.sizeBytes ?? 0) };
      if (upload.state !== 'hashing')
        throw ApplicationFailure.nonRetryable(
          `upload ${upload.id} is ${upload.state}, not hashing`,
          'UploadRefused',
        );
      const ctx = Context.current();
      const hash = createHash('sha256');
      let size = 0;
      const total = upload.sizeBytes === null ? null : Number(upload.sizeBytes);
      const progress = throttled(PROGRESS_MS, () =>
        events.publish(
          'jobs',
          'upload.progress',
          uploadEvent(upload, { bytes_hashed: size, bytes_total: total }),
        ),
      );
      let stream;
      try {
        stream = await storage.client.getObject(bucket, upload.objectKey);
      } catch (err) {
        if (isMissingObject(err))
          throw ApplicationFailure.nonRetryable(
            `the uploaded object ${upload.objectKey} is not in the store`,
            'UploadRefused',
          );
        throw err;
      }
      for await (const chunk of stream) {
        hash.update(chunk as Buffer);
        size += (chunk as Buffer).length;
        ctx.heartbeat({ size });
        await progress.tick();
      }
      const sha256 = hash.digest('hex');
      const done = await db.$transaction(async (tx) => {
        await advanceUpload(tx, {
          id: upload.id,
          from: 'hashing',
          data: { state: 'completed', sha256, sizeBytes: BigInt(size), completedAt: new Date() },
          audit: {
            actorId: upload.createdBy,
            action: 'upload.completed',
            detail: { sha256, size, workflow_id: uploadHashWorkflowId(upload.id) },
          },
        });
        return tx.upload.findUniqueOrThrow({ where: { id: upload.id } });
      });
      // The hash is recorded whatever happens to this notice.
      await events.publish('jobs', 'upload.hashed', uploadEvent(done)).catch(() => undefined);
      return { sha256, size };
    },

    /** Tells the jobs stream that hashing gave up; the upload stays `hashing` and complete may be repeated. */
    failUploadHash: async (input: UploadHashInput & { error: string }): Promise<void> => {
      const upload = await db.upload.findUniqueOrThrow({ where: { id: input.uploadId } });
      await events.publish('jobs', 'upload.failed', uploadEvent(upload, { error: input.error }));
    },
  };
}

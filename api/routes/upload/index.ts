import { randomUUID } from 'node:crypto';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { Response } from 'express';
import { advanceUpload, uploadHashWorkflowId, type UploadHashInput } from '../../../activities/upload';
import { uploadHashWorkflow } from '../../../workflows/upload';
import type { Upload } from '../../../generated/prisma/client';
import { recordAudit } from '../../../activities/audit';
import { isMissingObject } from '../../../activities/inspector/frame-objects';
import { ConflictError, InputError, UnavailableError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { checkNamedParts, findUpload, listStoredParts, uploadObjectKey, uploadOut } from './store';
import {
  MAX_PARTS,
  UploadAbortIn,
  UploadCompleteIn,
  UploadInitIn,
  UploadPresignIn,
  UploadSignIn,
} from './validators';

const MiB = 1024 * 1024;
/** Where complete's answer points: hashing progress and its end (`upload.*` events) arrive there. */
const JOBS_STREAM = '/api/events/jobs';

/**
 * The `upload` group: drives go straight from the client to the uploads bucket. Large drives use
 * an S3 multipart upload with presigned part URLs (init, presign-put, complete, abort): a dropped
 * connection costs only the part in flight, since presign-put lists the parts the store already
 * holds and complete can take them from the store. Small drives may use one presigned PUT (sign).
 * complete assembles the drive and starts UploadHashWorkflow `upload-<upload_id>`, which records
 * its SHA-256 (what ingest recognises a drive by) off the request; until then the upload is
 * `hashing` and ingest refuses it by name.
 */
export function createUploadRoutes(deps: AppDeps): RouteGroup {
  const { db, storage, config } = deps;
  const bucket = storage.bucket('uploads');
  const expiry = config.upload.urlExpirySeconds;
  const expiresAt = () => new Date(Date.now() + expiry * 1000).toISOString();

  /** The configured part size, grown when the declared size would need more than 10 000 parts. */
  const partSizeFor = (size?: number): number => {
    const configured = config.upload.partSizeMb * MiB;
    return size ? Math.max(configured, Math.ceil(size / MAX_PARTS / MiB) * MiB) : configured;
  };

  /** The hashing workflow of an upload: a business id, so a second start finds the first. */
  const startHashing = async (uploadId: string): Promise<void> => {
    const input: UploadHashInput = { uploadId };
    try {
      await deps.temporal.client.workflow.start(uploadHashWorkflow, {
        taskQueue: config.temporal.cpuTaskQueue,
        workflowId: uploadHashWorkflowId(uploadId),
        args: [input],
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw new UnavailableError(
        `the drive is assembled but its hashing could not be started (Temporal: ${(err as Error).message}); repeat complete`,
      );
    }
  };
  /** complete's answer: 202 with the jobs stream to watch until the hash lands (upload.hashed). */
  const completeOut = (res: Response, upload: Upload) => {
    res.location(JOBS_STREAM);
    return {
      ...uploadOut(upload),
      workflow_id: uploadHashWorkflowId(upload.id),
      events_url: JOBS_STREAM,
    };
  };

  return new RouteGroup('upload')
    .post(
      '/api/upload/init',
      {
        summary: 'Start a multipart upload of a drive into the uploads bucket',
        access: 'reviewer',
        body: { name: 'UploadInitIn', schema: UploadInitIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) => {
        const id = randomUUID();
        const objectKey = uploadObjectKey(id, body.filename);
        const partSize = partSizeFor(body.size);
        const multipartId = await storage.client.initiateNewMultipartUpload(bucket, objectKey, {
          'Content-Type': body.content_type,
        });
        try {
          const upload = await db.$transaction(async (tx) => {
            const row = await tx.upload.create({
              data: {
                id,
                objectKey,
                multipartId,
                filename: body.filename,
                contentType: body.content_type,
                declaredSize: body.size ?? null,
                partSize,
                createdBy: principal.userId,
              },
            });
            await recordAudit(tx, {
              actorId: principal.userId,
              action: 'upload.started',
              subjectType: 'upload',
              subjectId: id,
              detail: { object_key: objectKey, size: body.size ?? null },
              requestId: String(req.id),
            });
            return row;
          });
          return {
            ...uploadOut(upload),
            part_count: body.size ? Math.ceil(body.size / partSize) : null,
            max_parts: MAX_PARTS,
            url_expiry_seconds: expiry,
          };
        } catch (err) {
          await storage.client.abortMultipartUpload(bucket, objectKey, multipartId).catch(() => undefined);
          throw err;
        }
      },
    )
    .post(
      '/api/upload/presign-put',
      {
        summary:
          'Presigned PUT URLs for parts of a multipart upload, and the parts the store already holds (to resume after a dropped connection)',
        access: 'reviewer',
        body: { name: 'UploadPresignIn', schema: UploadPresignIn },
        statuses: { 404: 'no such upload', 409: 'the upload is hashing, completed or aborted' },
      },
      async ({ body }) => {
        const upload = await findUpload(deps, body.upload_id, 'open');
        if (!upload.multipartId)
          throw new InputError('this upload is a single presigned PUT (sign); it has no parts', [
            { field: 'body.upload_id', message: 'not a multipart upload' },
          ]);
        const parts = await Promise.all(
          [...new Set(body.part_numbers)]
            .sort((a, b) => a - b)
            .map(async (n) => ({
              part_number: n,
              url: await storage.client.presignedUrl('PUT', bucket, upload.objectKey, expiry, {
                partNumber: String(n),
                uploadId: upload.multipartId!,
              }),
            })),
        );
        return {
          upload_id: upload.id,
          part_size: upload.partSize,
          expires_at: expiresAt(),
          parts,
          uploaded: await listStoredParts(deps, upload),
        };
      },
    )
    .post(
      '/api/upload/complete',
      {
        summary:
          'Assemble the uploaded parts into the drive and start hashing it (SHA-256) in UploadHashWorkflow upload-<upload_id>; 202, the upload is `hashing` until upload.hashed on the jobs stream; repeating it answers the current state',
        access: 'reviewer',
        body: { name: 'UploadCompleteIn', schema: UploadCompleteIn },
        successStatus: 202,
        statuses: {
          404: 'no such upload',
          409: 'the upload was aborted',
          503: 'Temporal did not take the hashing workflow; the drive is assembled, repeat complete',
        },
      },
      async ({ body, principal, req, res }) => {
        const upload = await findUpload(deps, body.upload_id);
        if (upload.state === 'completed') return completeOut(res, upload);
        if (upload.state === 'aborted')
          throw new ConflictError(`upload ${upload.id} is ${upload.state}`, {
            upload_id: upload.id,
            state: upload.state,
          });
        if (upload.state === 'open') {
          let size: number;
          if (upload.multipartId) {
            const stored = await listStoredParts(deps, upload);
            const parts = body.parts ? checkNamedParts(body.parts, stored) : stored;
            if (!parts.length)
              throw new InputError('no part of this upload was received yet', [
                { field: 'body.upload_id', message: 'no parts' },
              ]);
            size = parts.reduce((s, p) => s + p.size, 0);
            if (upload.declaredSize !== null && BigInt(size) !== upload.declaredSize) {
              throw new InputError(
                `the parts hold ${size} bytes but the upload declared ${upload.declaredSize}; upload the missing parts`,
                [{ field: 'body.parts', message: 'size mismatch' }],
              );
            }
            await storage.client.completeMultipartUpload(
              bucket,
              upload.objectKey,
              upload.multipartId,
              parts.map((p) => ({ part: p.part_number, etag: p.etag })),
            );
          } else {
            const stat = await storage.client.statObject(bucket, upload.objectKey).catch((err: unknown) => {
              if (isMissingObject(err))
                throw new InputError('nothing was uploaded to the signed URL yet', [
                  { field: 'body.upload_id', message: 'no object' },
                ]);
              throw err;
            });
            size = stat.size;
            if (upload.declaredSize !== null && BigInt(size) !== upload.declaredSize) {
              throw new InputError(
                `the uploaded object holds ${size} bytes but the upload declared ${upload.declaredSize}; PUT it again`,
                [{ field: 'body.upload_id', message: 'size mismatch' }],
              );
            }
          }
          // Two concurrent completes: the first one's row update wins; both go on to the workflow.
          await db.$transaction(async (tx) => {
            await advanceUpload(tx, {
              id: upload.id,
              from: 'open',
              data: { state: 'hashing', sizeBytes: BigInt(size) },
              audit: {
                actorId: principal.userId,
                action: 'upload.assembled',
                detail: { size, workflow_id: uploadHashWorkflowId(upload.id) },
                requestId: String(req.id),
              },
            });
          });
        }
        // `hashing`: the workflow is started, or started again when an earlier start or run failed.
        await startHashing(upload.id);
        return completeOut(res, await findUpload(deps, upload.id));
      },
    )
    .post(
      '/api/upload/abort',
      {
        summary: 'Abandon an upload: its parts or object are deleted',
        access: 'reviewer',
        body: { name: 'UploadAbortIn', schema: UploadAbortIn },
        statuses: { 404: 'no such upload', 409: 'the upload is completed or hashing (it is a drive now)' },
      },
      async ({ body, principal, req }) => {
        const upload = await findUpload(deps, body.upload_id);
        if (upload.state === 'aborted') return uploadOut(upload);
        if (upload.state === 'completed' || upload.state === 'hashing')
          throw new ConflictError(
            `upload ${upload.id} is ${upload.state}; an assembled drive is not aborted`,
            {
              upload_id: upload.id,
              state: upload.state,
            },
          );
        if (upload.multipartId) {
          await storage.client
            .abortMultipartUpload(bucket, upload.objectKey, upload.multipartId)
            .catch((err: unknown) => {
              if ((err as { code?: string }).code !== 'NoSuchUpload') throw err;
            });
        } else {
          await storage.client.removeObject(bucket, upload.objectKey);
        }
        await db.$transaction(async (tx) => {
          await tx.upload.update({ where: { id: upload.id }, data: { state: 'aborted' } });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'upload.aborted',
            subjectType: 'upload',
            subjectId: upload.id,
            requestId: String(req.id),
          });
        });
        return uploadOut(await findUpload(deps, upload.id));
      },
    )
    .post(
      '/api/upload/sign',
      {
        summary: 'One presigned PUT URL for a small drive (up to 5 GiB); finish it with complete',
        access: 'reviewer',
        body: { name: 'UploadSignIn', schema: UploadSignIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) => {
        const id = randomUUID();
        const objectKey = uploadObjectKey(id, body.filename);
        const url = await storage.client.presignedUrl('PUT', bucket, objectKey, expiry);
        const upload = await db.$transaction(async (tx) => {
          const row = await tx.upload.create({
            data: {
              id,
              objectKey,
              filename: body.filename,
              contentType: body.content_type,
              declaredSize: body.size ?? null,
              partSize: 0,
              createdBy: principal.userId,
            },
          });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'upload.started',
            subjectType: 'upload',
            subjectId: id,
            detail: { object_key: objectKey, mode: 'single' },
            requestId: String(req.id),
          });
          return row;
        });
        return { ...uploadOut(upload), method: 'PUT', url, expires_at: expiresAt() };
      },
    );
}

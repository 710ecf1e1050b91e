import { z } from 'zod';

/** S3 limits: parts are numbered 1..10000; a single PUT carries at most 5 GiB. */
export const MAX_PARTS = 10_000;
export const SINGLE_PUT_MAX_BYTES = 5 * 1024 ** 3;
/** The largest drive accepted: 10 000 parts of 5 GiB would be 48 TiB; 5 TiB is S3's object limit. */
export const MAX_UPLOAD_BYTES = 5 * 1024 ** 4;

const filename = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .meta({ description: "The drive's file name; its extension is kept in the object key." });
const contentType = z
  .string()
  .trim()
  .min(1)
  .max(255)
  .regex(/^[\w.+-]+\/[\w.+-]+$/, 'a MIME type such as video/mp4')
  .default('application/octet-stream');
const uploadId = z.uuid().meta({ description: 'The id init or sign returned.' });

export const UploadInitIn = z.strictObject({
  filename,
  content_type: contentType,
  size: z
    .number()
    .int()
    .positive()
    .max(MAX_UPLOAD_BYTES)
    .optional()
    .meta({ description: 'Total bytes, when known: checked at complete, and used to size the parts.' }),
});
export type UploadInitIn = z.infer<typeof UploadInitIn>;

export const UploadPresignIn = z.strictObject({
  upload_id: uploadId,
  part_numbers: z.array(z.number().int().min(1).max(MAX_PARTS)).min(1).max(100),
});
export type UploadPresignIn = z.infer<typeof UploadPresignIn>;

export const UploadCompleteIn = z.strictObject({
  upload_id: uploadId,
  parts: z
    .array(
      z.strictObject({
        part_number: z.number().int().min(1).max(MAX_PARTS),
        etag: z.string().min(1).max(200),
      }),
    )
    .min(1)
    .max(MAX_PARTS)
    .optional()
    .meta({
      description:
        'The parts and their ETags as the PUTs answered; when left out the parts the store holds are used.',
    }),
});
export type UploadCompleteIn = z.infer<typeof UploadCompleteIn>;

export const UploadAbortIn = z.strictObject({ upload_id: uploadId });
export type UploadAbortIn = z.infer<typeof UploadAbortIn>;

export const UploadSignIn = z.strictObject({
  filename,
  content_type: contentType,
  size: z.number().int().positive().max(SINGLE_PUT_MAX_BYTES).optional(),
});
export type UploadSignIn = z.infer<typeof UploadSignIn>;

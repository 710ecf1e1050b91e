import { z } from 'zod';

export const DRIVE_KINDS = ['video', 'bag', 'frames'] as const;

/**
 * Body of POST /api/ingest (the spec leaves it open; docs/ingest.md). The drive is an upload
 * completed through the upload routes, a server path inside an allowed root (admin), or an object
 * of a registered source (`source_id` and `key`).
 */
export const IngestIn = z
  .strictObject({
    upload_id: z.uuid().optional().meta({ description: 'A completed upload (upload routes).' }),
    path: z.string().min(1).max(4096).optional().meta({
      description:
        'Admin only: an absolute server path (file, or folder of frames) inside APP_INGEST__ALLOWED_ROOTS.',
    }),
    source_id: z.uuid().optional().meta({
      description: 'A registered source (GET /api/integrations/sources), with key: the object to ingest.',
    }),
    key: z.string().min(1).max(1024).optional().meta({
      description:
        "With source_id: the object's key under the source's prefix (a video, a bag or a zip of frames).",
    }),
    kind: z
      .enum(DRIVE_KINDS)
      .meta({ description: 'video file; bag (ROS 1 .bag or MCAP); frames (a zip or a folder of images).' }),
    name: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'Session name; defaults to the file or folder name.' }),
    project_id: z.string().trim().min(1).max(100).optional(),
    vehicle_id: z.string().trim().min(1).max(100).optional(),
    topic: z
      .string()
      .min(1)
      .max(256)
      .optional()
      .meta({ description: 'Bags only: the image topic; needed when the bag has several.' }),
    frame_rate: z.number().positive().max(1000).optional().meta({
      description:
        'Frames only: the rate the frames were captured at (default: ingest.target_fps, every frame taken).',
    }),
  })
  .superRefine((b, ctx) => {
    if ([b.upload_id, b.path, b.source_id].filter((v) => v !== undefined).length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: ['upload_id'],
        message: 'give exactly one of upload_id, path and source_id',
      });
    if (b.source_id !== undefined && b.key === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['key'],
        message: 'source_id needs the key of the object to ingest',
      });
    if (b.key !== undefined && b.source_id === undefined)
      ctx.addIssue({ code: 'custom', path: ['key'], message: 'key applies with source_id only' });
    if (b.topic !== undefined && b.kind !== 'bag')
      ctx.addIssue({ code: 'custom', path: ['topic'], message: 'topic applies to kind "bag" only' });
    if (b.frame_rate !== undefined && b.kind !== 'frames')
      ctx.addIssue({
        code: 'custom',
        path: ['frame_rate'],
        message: 'frame_rate applies to kind "frames" only',
      });
  });
export type IngestIn = z.infer<typeof IngestIn>;

export const ImportStartIn = z.strictObject({
  drives: z
    .array(IngestIn)
    .min(1)
    .max(20)
    .meta({ description: 'Each drive starts its own session and IngestWorkflow.' }),
});
export type ImportStartIn = z.infer<typeof ImportStartIn>;

export const JOB_STATES = ['queued', 'running', 'completed', 'failed'] as const;

export const ImportsQuery = z.strictObject({
  state: z.enum(JOB_STATES).optional(),
  kind: z.enum(DRIVE_KINDS).optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page.' }),
});

export const ProgressQuery = z.strictObject({
  session_id: z.uuid().optional(),
});

import { z } from 'zod';
import { ALL_EVENT_KINDS, EVENT_KINDS } from '../../../core/events/catalogue';
import { DELIVERY_STATUSES } from '../../../core/webhooks/delivery';
import { MAX_URL_LENGTH, webhookUrlProblem } from '../../../core/webhooks/targets';
import { REFUSED_SOURCE_KINDS, S3_BUCKET_NAME } from '../../../core/sources/preview';
import { limitParam } from '../../http/session-reads';

const SUBSCRIBABLE = [ALL_EVENT_KINDS, ...EVENT_KINDS] as [string, ...string[]];

export const WebhookIn = z
  .strictObject({
    url: z
      .string()
      .max(MAX_URL_LENGTH)
      .superRefine((url, ctx) => {
        const problem = webhookUrlProblem(url);
        if (problem) ctx.addIssue({ code: 'custom', message: `the URL ${problem}` });
      })
      .meta({
        description: 'The receiver: http(s); non-public addresses only where allowed (docs/webhooks.md)',
      }),
    kinds: z
      .array(
        z.enum(SUBSCRIBABLE, {
          error: (issue) =>
            `unknown event kind ${JSON.stringify(issue.input)}; GET /api/integrations/events lists them, "*" is every kind`,
        }),
      )
      .min(1)
      .max(SUBSCRIBABLE.length)
      .refine((kinds) => new Set(kinds).size === kinds.length, 'each kind once')
      .refine(
        (kinds) => !kinds.includes(ALL_EVENT_KINDS) || kinds.length === 1,
        '"*" subscribes to every kind; list it alone',
      )
      .meta({ description: 'Event kinds delivered (GET /api/integrations/events), or ["*"] for all' }),
    description: z.string().trim().max(500).nullable().default(null),
  })
  .meta({ description: 'A webhook; its signing secret is answered once, by this request' });

export const WebhooksQuery = z.strictObject({
  webhook_id: z.uuid().optional().meta({ description: 'Only this webhook (404 when there is none)' }),
  deliveries: limitParam(10, 100).meta({ description: 'Newest deliveries listed per webhook' }),
  delivery_status: z
    .enum(DELIVERY_STATUSES)
    .optional()
    .meta({ description: 'Only deliveries in this state' }),
});

const S3SourceIn = z.strictObject({
  kind: z.literal('s3'),
  name: z.string().trim().min(1).max(100).meta({ description: 'Unique' }),
  endpoint: z
    .url({ protocol: /^https?$/, error: 'an http(s) URL such as https://s3.eu-west-1.amazonaws.com' })
    .max(MAX_URL_LENGTH)
    // Zod runs this after a failed URL check too: what does not parse is that check's to report.
    .refine((u) => {
      if (!URL.canParse(u)) return true;
      const url = new URL(u);
      return !url.username && !url.password && url.pathname === '/' && !url.search && !url.hash;
    }, 'scheme, host and port only: no path, query or credentials')
    .meta({ description: 'The S3 API endpoint: scheme, host and port' }),
  bucket: z
    .string()
    .regex(S3_BUCKET_NAME, 'an S3 bucket name: 3 to 63 lowercase letters, digits, dots, hyphens'),
  prefix: z.string().max(1024).default('').meta({ description: 'Only keys under this prefix' }),
  region: z.string().trim().min(1).max(64).default('us-east-1'),
  access_key_id: z.string().min(1).max(256),
  secret_access_key: z.string().min(1).max(1024).meta({ description: 'Kept sealed; never answered' }),
  force_path_style: z.boolean().default(true).meta({
    description: 'bucket in the path (MinIO and most S3-compatible stores) rather than the host name',
  }),
});

/**
 * A kind the platform knows of but cannot read; the route refuses it by name, whatever else the
 * body holds (not looked at: z.object drops it).
 */
const RefusedSourceIn = z.object({ kind: z.enum(REFUSED_SOURCE_KINDS) });

export const IntegrationSourceIn = z
  .discriminatedUnion('kind', [S3SourceIn, RefusedSourceIn])
  .meta({ description: 'An external bucket to ingest from; only s3 (S3-compatible) is served' });
export type S3SourceIn = z.infer<typeof S3SourceIn>;

export const PreviewQuery = z.strictObject({
  limit: limitParam(50, 200).meta({ description: 'Keys listed (the first, in key order)' }),
});

import { z } from 'zod';

/**
 * The cloud GPU provider contract (docs/cloud.md, "Provider contract"): the HTTP JSON API a
 * provider adapter serves and the platform calls with `Authorization: Bearer <APP_CLOUD__API_KEY>`.
 * These schemas are the contract's answers; the platform refuses an answer that does not parse
 * instead of guessing, and the test stub (testkit/cloud-provider.ts) serves exactly these shapes.
 */

/** Tags the platform puts on an instance: `owner` (APP_CLOUD__INSTANCE_TAG) and the session's id. */
export const INSTANCE_TAGS = { owner: 'owner', sessionId: 'session_id' } as const;

/** `GET /v1/quote`: the GPU offered and its hourly price. */
export const Quote = z.object({
  gpu: z.string().min(1),
  hourly_usd: z.number().nonnegative(),
});
export type Quote = z.infer<typeof Quote>;

/** Terminated and failed instances no longer run (nor bill); every other status does. */
export const INSTANCE_STATUSES = ['starting', 'running', 'stopping', 'terminated', 'failed'] as const;
export const GONE_INSTANCE_STATUSES: ReadonlySet<string> = new Set(['terminated', 'failed']);

/** An instance, as `POST /v1/instances`, `GET /v1/instances/{id}` and `GET /v1/instances` answer it. */
export const Instance = z.object({
  id: z.string().min(1),
  status: z.enum(INSTANCE_STATUSES),
  gpu: z.string().nullish(),
  hourly_usd: z.number().nonnegative(),
  tags: z.record(z.string(), z.string()).default({}),
  created_at: z.iso.datetime({ offset: true }),
  ended_at: z.iso.datetime({ offset: true }).nullish(),
});
export type Instance = z.infer<typeof Instance>;

export const InstanceList = z.object({ instances: z.array(Instance) });

/** `POST /v1/instances` body. `max_hours` lets the provider stop the instance even if the platform cannot. */
export interface CreateInstanceRequest {
  tags: Record<string, string>;
  max_hours: number;
}

export const JOB_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const;

/** `POST /v1/jobs` body: what to train, every input a presigned URL with its SHA-256. */
export interface JobRequest {
  instance_id: string;
  tags: Record<string, string>;
  task: string;
  trainer: string;
  config: unknown;
  parent_model: { version: string; url: string; sha256: string; size_bytes: number };
  dataset: {
    commit_id: string;
    files: Array<{ path: string; url: string; sha256: string; size: number }>;
  };
}

/** `POST /v1/jobs` and `GET /v1/jobs/{id}`: a job's state; `result` once it succeeded, `error` once it failed. */
export const Job = z.object({
  id: z.string().min(1),
  status: z.enum(JOB_STATUSES),
  progress: z.record(z.string(), z.unknown()).default({}),
  error: z.string().nullish(),
  result: z
    .object({
      /** Absolute, or relative to the endpoint; the bearer key goes only to the endpoint's own origin. */
      model_url: z.string().min(1),
      sha256: z.string().regex(/^[0-9a-f]{64}$/),
      size_bytes: z.number().int().positive(),
      metrics: z.record(z.string(), z.unknown()).default({}),
    })
    .nullish(),
});
export type Job = z.infer<typeof Job>;

/** Every error answer: a non-2xx status with `{ "error": "<reason>" }`. */
export const ProviderError = z.object({ error: z.string() });

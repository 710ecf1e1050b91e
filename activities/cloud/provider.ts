import type { z } from 'zod';
import {
  Instance,
  InstanceList,
  Job,
  ProviderError,
  Quote,
  type CreateInstanceRequest,
  type JobRequest,
} from '../../core/cloud';
import type { AppConfig } from '../../core/config';
import { RefusedError, UnavailableError } from '../../core/errors';

/**
 * The platform's side of the cloud GPU provider contract (docs/cloud.md, "Provider contract"): one
 * HTTP JSON client over the configured endpoint, with the bearer key, a limit per request, and
 * every answer checked against core/cloud's schemas.
 */
export type CloudConfig = AppConfig['cloud'];

/** A provider that answered with an error, or not at all: its name, the HTTP status and its own reason. */
export class CloudProviderError extends UnavailableError {
  constructor(
    message: string,
    readonly status: number | null,
    readonly reason: string,
  ) {
    super(message, { provider_status: status, provider_reason: reason });
  }
}

/** The variables a configured provider needs that are empty; none when one is configured. */
export function missingCloudSettings(config: CloudConfig): string[] {
  return [
    ...(config.provider ? [] : ['APP_CLOUD__PROVIDER']),
    ...(config.endpoint ? [] : ['APP_CLOUD__ENDPOINT']),
  ];
}

export const cloudConfigured = (config: CloudConfig): boolean => missingCloudSettings(config).length === 0;

/** Refuses by name when no provider is configured: cloud work stays on the local GPU slot. */
export function requireCloudProvider(config: CloudConfig): void {
  const missing = missingCloudSettings(config);
  if (missing.length)
    throw new RefusedError(
      `no cloud GPU provider is configured: set ${missing.join(' and ')} (and APP_CLOUD__API_KEY when the provider needs one; docs/cloud.md); until then training runs on the local GPU slot`,
      { missing },
    );
}

export interface CloudProvider {
  name: string;
  quote(): Promise<Quote>;
  createInstance(body: CreateInstanceRequest, idempotencyKey: string): Promise<Instance>;
  /** null when the provider does not know the instance (404). */
  getInstance(id: string): Promise<Instance | null>;
  listInstances(): Promise<Instance[]>;
  /** `absent`: the provider did not know it (404), which is as terminated as it gets. */
  terminateInstance(id: string): Promise<'terminated' | 'absent'>;
  submitJob(body: JobRequest, idempotencyKey: string): Promise<Job>;
  getJob(id: string): Promise<Job>;
  cancelJob(id: string): Promise<void>;
  /** A finished job's model file. */
  downloadModel(url: string): Promise<Buffer>;
}

export function cloudProvider(config: CloudConfig): CloudProvider {
  requireCloudProvider(config);
  const name = config.provider;
  const base = new URL(config.endpoint.endsWith('/') ? config.endpoint : `${config.endpoint}/`);
  const timeoutMs = config.requestTimeoutSeconds * 1000;

  async function send(
    method: string,
    path: string,
    opts: { body?: unknown; idempotencyKey?: string } = {},
  ): Promise<Response> {
    const url = new URL(path.replace(/^\//, ''), base);
    const what = `${method} ${url.pathname}`;
    let res: Response;
    try {
      res = await fetch(url, {
        method,
        headers: {
          ...(config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {}),
          ...(opts.body === undefined ? {} : { 'content-type': 'application/json' }),
          ...(opts.idempotencyKey ? { 'idempotency-key': opts.idempotencyKey } : {}),
        },
        body: opts.body === undefined ? undefined : JSON.stringify(opts.body),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const reason = (err as Error).message;
      throw new CloudProviderError(
        `cloud provider ${name} did not answer ${what} (${reason}; APP_CLOUD__ENDPOINT is ${config.endpoint})`,
        null,
        reason,
      );
    }
    if (!res.ok) {
      const text = await res.text();
      let reason = text.slice(0, 500) || res.statusText;
      try {
        reason = ProviderError.parse(JSON.parse(text)).error;
      } catch {
        // not the contract's error shape: its raw text is the best reason there is
      }
      throw new CloudProviderError(
        `cloud provider ${name} answered ${what} with ${res.status}: ${reason}`,
        res.status,
        reason,
      );
    }
    return res;
  }

  async function parse<S extends z.ZodType>(schema: S, res: Response, what: string): Promise<z.infer<S>> {
    const parsed = schema.safeParse(await res.json().catch(() => undefined));
    if (!parsed.success)
      throw new CloudProviderError(
        `cloud provider ${name} answered ${what} with something that is not the contract (docs/cloud.md): ${parsed.error.issues
          .map((i) => `${i.path.join('.') || '(body)'}: ${i.message}`)
          .join('; ')}`,
        res.status,
        'malformed answer',
      );
    return parsed.data;
  }

  const json = async <S extends z.ZodType>(
    schema: S,
    method: string,
    path: string,
    opts: { body?: unknown; idempotencyKey?: string } = {},
  ): Promise<z.infer<S>> => parse(schema, await send(method, path, opts), `${method} ${path}`);

  /** null for a 404: the provider does not know the instance or job (any more). */
  const unlessAbsent = <T>(p: Promise<T>): Promise<T | null> =>
    p.catch((err: unknown) => {
      if (err instanceof CloudProviderError && err.status === 404) return null;
      throw err;
    });
  const id = encodeURIComponent;

  return {
    name,
    quote: () => json(Quote, 'GET', '/v1/quote'),
    createInstance: (body, idempotencyKey) =>
      json(Instance, 'POST', '/v1/instances', { body, idempotencyKey }),
    getInstance: (instanceId) => unlessAbsent(json(Instance, 'GET', `/v1/instances/${id(instanceId)}`)),
    listInstances: async () => (await json(InstanceList, 'GET', '/v1/instances')).instances,
    async terminateInstance(instanceId) {
      const res = await unlessAbsent(send('DELETE', `/v1/instances/${id(instanceId)}`));
      return res ? 'terminated' : 'absent';
    },
    submitJob: (body, idempotencyKey) => json(Job, 'POST', '/v1/jobs', { body, idempotencyKey }),
    getJob: (jobId) => json(Job, 'GET', `/v1/jobs/${id(jobId)}`),
    async cancelJob(jobId) {
      await unlessAbsent(send('DELETE', `/v1/jobs/${id(jobId)}`));
    },
    async downloadModel(url) {
      const target = new URL(url, base);
      // The key is the provider's: a presigned URL on another host needs none and must not see it.
      const own = target.origin === base.origin;
      let res: Response;
      try {
        res = await fetch(target, {
          headers: own && config.apiKey ? { authorization: `Bearer ${config.apiKey}` } : {},
          signal: AbortSignal.timeout(Math.max(timeoutMs, 600_000)),
        });
      } catch (err) {
        const reason = (err as Error).message;
        throw new CloudProviderError(
          `cloud provider ${name}: the trained model at ${target.origin}${target.pathname} could not be fetched (${reason})`,
          null,
          reason,
        );
      }
      if (!res.ok)
        throw new CloudProviderError(
          `cloud provider ${name}: fetching the trained model at ${target.origin}${target.pathname} answered ${res.status}`,
          res.status,
          res.statusText,
        );
      return Buffer.from(await res.arrayBuffer());
    },
  };
}

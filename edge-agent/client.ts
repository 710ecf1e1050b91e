import { setTimeout as sleep } from 'node:timers/promises';
import type { TelemetryBody } from '../core/edge/telemetry';

/**
 * The agent's side of the edge routes (docs/edge-rollout.md): find or register its device, read
 * its assignment, post telemetry. A 429 is waited out once (its Retry-After); any other failure is
 * the caller's to retry on its next cycle. `signal` (the agent stopping) cuts waits and downloads short.
 */

export interface Assignment {
  artifact_id: string;
  sha256: string;
  size_bytes: number;
  model_version: string;
  url: string;
}

export interface DeviceView {
  id: string;
  name: string;
  target: string;
  assignment: Assignment | null;
}

/** The device name is taken by a device of another target: a misconfiguration no retry mends. */
export class DeviceConflictError extends Error {}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    detail: string,
  ) {
    super(`HTTP ${status}: ${detail}`);
  }
}

export function createApiClient(opts: { apiUrl: string; token: string; signal: AbortSignal }) {
  const call = async <T>(method: string, path: string, body?: unknown, retried = false): Promise<T> => {
    const res = await fetch(`${opts.apiUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${opts.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
      // Not the stop signal: the last report goes out after the agent is told to stop.
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (res.status === 429 && !retried) {
      await sleep(Number(res.headers.get('retry-after') ?? 1) * 1000, undefined, { signal: opts.signal });
      return call(method, path, body, true);
    }
    if (!res.ok) {
      let detail = text;
      try {
        detail = (JSON.parse(text) as { detail?: string }).detail ?? text;
      } catch {
        // not a problem+json body: keep the text
      }
      throw new ApiError(res.status, detail);
    }
    return JSON.parse(text) as T;
  };
  const byName = async (name: string): Promise<DeviceView | undefined> =>
    (await call<{ items: DeviceView[] }>('GET', `/api/edge/devices?name=${encodeURIComponent(name)}`))
      .items[0];
  return {
    device: byName,
    /** The device of this name, registered now when it is not yet; refused when it exists for another target. */
    async ensureDevice(d: {
      name: string;
      target: string;
      labels: Record<string, string>;
    }): Promise<DeviceView> {
      let device = await byName(d.name);
      if (!device) {
        device = await call<DeviceView>('POST', '/api/edge/devices', {
          name: d.name,
          target: d.target,
          labels: d.labels,
        }).catch(async (err: unknown) => {
          // Registered by someone else meanwhile: it is there now.
          if (err instanceof ApiError && err.status === 409) return byName(d.name);
          throw err;
        });
      }
      if (!device) throw new Error(`device ${d.name} vanished while it was being registered`);
      if (device.target !== d.target)
        throw new DeviceConflictError(
          `device ${d.name} is registered for target ${device.target}, not ${d.target}`,
        );
      return device;
    },
    telemetry: (body: TelemetryBody) => call<{ id: string }>('POST', '/api/edge/telemetry', body),
    /** The artifact's bytes from its presigned URL (no bearer token: the URL carries its own signature). */
    async download(url: string): Promise<Buffer> {
      const res = await fetch(url, { signal: AbortSignal.any([opts.signal, AbortSignal.timeout(300_000)]) });
      if (!res.ok) throw new ApiError(res.status, `download of the artifact failed`);
      return Buffer.from(await res.arrayBuffer());
    },
  };
}
export type ApiClient = ReturnType<typeof createApiClient>;

import { createHash, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Instance, Job, JobRequest } from '../core/cloud';
import { initializerFloats, readOnnx, setInitializerFloats, writeOnnx } from '../core/onnx/graph';

/**
 * A cloud GPU provider on loopback that serves the provider contract (docs/cloud.md, core/cloud
 * contract.ts) for the tests: quote, instances with tags, and a job API that really fetches every
 * presigned input URL, checks each file's SHA-256 and size, and "trains" by changing one bias of
 * the parent ONNX model (STUB_EDIT), so the platform gets a real, different ONNX file back.
 */

/** The one weight the stub's training changes: class 2 (car) of the stride-8 class head of YOLOX. */
export const STUB_EDIT = { initializer: 'head.cls_preds.0.bias', index: 2, delta: 0.25 } as const;

export interface StubRequest {
  method: string;
  path: string;
  idempotencyKey: string | null;
}

interface StubJob extends Job {
  request: JobRequest;
  model?: Buffer;
}

export interface CloudProviderStub {
  url: string;
  apiKey: string;
  gpu: string;
  /** The price quoted and billed for new instances; tests change it. */
  hourlyUsd: number;
  instances: Map<string, Instance>;
  jobs: Map<string, StubJob>;
  requests: StubRequest[];
  /** The next job fails, after fetching its inputs, with this reason. */
  failNextJob(reason: string): void;
  /** An instance started outside the platform (or one it lost track of), with these tags. */
  addInstance(tags: Record<string, string>): Instance;
  /** Resolves when the job has finished (succeeded, failed or cancelled). */
  settled(jobId: string): Promise<StubJob>;
  close(): Promise<void>;
}

/** A call, not a property read, so the compiler does not keep `running` narrowed across the awaits. */
const cancelled = (job: StubJob) => job.status === 'cancelled';
const sha256 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function fetchChecked(url: string, expected: { sha256: string; size: number }, what: string) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${what}: GET answered ${res.status}`);
  const bytes = Buffer.from(await res.arrayBuffer());
  if (bytes.length !== expected.size || sha256(bytes) !== expected.sha256)
    throw new Error(
      `${what}: ${bytes.length} bytes with SHA-256 ${sha256(bytes)}, not the ${expected.size} bytes declared`,
    );
  return bytes;
}

export async function startCloudProviderStub(
  opts: { apiKey?: string; gpu?: string; hourlyUsd?: number; bootChecks?: number } = {},
): Promise<CloudProviderStub> {
  const instances = new Map<string, Instance>();
  const jobs = new Map<string, StubJob>();
  const requests: StubRequest[] = [];
  /** GETs of an instance it answers `starting` to before it runs. */
  const bootLeft = new Map<string, number>();
  const byKey = new Map<string, string>();
  const done = new Map<string, Promise<StubJob>>();
  let failNext: string | null = null;

  const stub = {
    url: '',
    apiKey: opts.apiKey ?? `stub-${randomUUID()}`,
    gpu: opts.gpu ?? 'NVIDIA H100 80GB',
    hourlyUsd: opts.hourlyUsd ?? 2.5,
    instances,
    jobs,
    requests,
  };

  const newInstance = (tags: Record<string, string>): Instance => {
    const instance: Instance = {
      id: `i-${randomUUID()}`,
      status: 'starting',
      gpu: stub.gpu,
      hourly_usd: stub.hourlyUsd,
      tags,
      created_at: new Date().toISOString(),
      ended_at: null,
    };
    instances.set(instance.id, instance);
    bootLeft.set(instance.id, opts.bootChecks ?? 1);
    return instance;
  };

  async function train(job: StubJob): Promise<void> {
    const { request } = job;
    job.status = 'running';
    job.progress = { step: 'downloading', files_verified: 0, files_total: request.dataset.files.length };
    try {
      const parent = await fetchChecked(
        request.parent_model.url,
        { sha256: request.parent_model.sha256, size: request.parent_model.size_bytes },
        'parent model',
      );
      let datasetBytes = 0;
      for (const f of request.dataset.files) {
        datasetBytes += (await fetchChecked(f.url, f, `dataset file ${f.path}`)).length;
        job.progress = { ...job.progress, files_verified: Number(job.progress.files_verified) + 1 };
      }
      if (failNext) {
        const reason = failNext;
        failNext = null;
        throw new Error(reason);
      }
      job.progress = { ...job.progress, step: 'training' };
      const model = readOnnx(parent);
      const bias = initializerFloats(model, STUB_EDIT.initializer).slice();
      bias[STUB_EDIT.index]! += STUB_EDIT.delta;
      setInitializerFloats(model, STUB_EDIT.initializer, bias);
      const trained = Buffer.from(writeOnnx(model));
      if (cancelled(job)) return;
      job.model = trained;
      job.status = 'succeeded';
      job.progress = { ...job.progress, step: 'done' };
      job.result = {
        model_url: `/v1/jobs/${job.id}/model`,
        sha256: sha256(trained),
        size_bytes: trained.length,
        // What the stub did, not a measured accuracy: it has none to report.
        metrics: {
          dataset_files_verified: request.dataset.files.length,
          dataset_bytes: datasetBytes,
          parent_sha256: request.parent_model.sha256,
          edited: `${STUB_EDIT.initializer}[${STUB_EDIT.index}] + ${STUB_EDIT.delta}`,
        },
      };
    } catch (err) {
      if (cancelled(job)) return;
      job.status = 'failed';
      job.error = (err as Error).message;
    }
  }

  const send = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const readBody = async (req: IncomingMessage): Promise<unknown> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    return chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
  };
  const jobOut = ({ request: _request, model: _model, ...job }: StubJob): Job => job;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://stub');
    const key = (req.headers['idempotency-key'] as string | undefined) ?? null;
    requests.push({ method: req.method ?? '', path: url.pathname, idempotencyKey: key });
    if (req.headers.authorization !== `Bearer ${stub.apiKey}`)
      return send(res, 401, { error: 'invalid API key' });
    const route = `${req.method} ${url.pathname}`;
    let m: RegExpMatchArray | null;

    if (route === 'GET /v1/quote') return send(res, 200, { gpu: stub.gpu, hourly_usd: stub.hourlyUsd });
    if (route === 'GET /v1/instances') return send(res, 200, { instances: [...instances.values()] });
    if (route === 'POST /v1/instances') {
      const known = key ? byKey.get(`instance:${key}`) : undefined;
      if (known) return send(res, 200, instances.get(known));
      const body = (await readBody(req)) as { tags?: Record<string, string> };
      const instance = newInstance(body?.tags ?? {});
      if (key) byKey.set(`instance:${key}`, instance.id);
      return send(res, 201, instance);
    }
    if ((m = route.match(/^(GET|DELETE) \/v1\/instances\/([^/]+)$/))) {
      const instance = instances.get(decodeURIComponent(m[2]!));
      if (!instance) return send(res, 404, { error: 'no such instance' });
      if (m[1] === 'GET') {
        const left = bootLeft.get(instance.id) ?? 0;
        if (instance.status === 'starting' && left <= 0) instance.status = 'running';
        bootLeft.set(instance.id, left - 1);
        return send(res, 200, instance);
      }
      instance.status = 'terminated';
      instance.ended_at ??= new Date().toISOString();
      for (const job of jobs.values())
        if (
          job.request.instance_id === instance.id &&
          (job.status === 'queued' || job.status === 'running')
        ) {
          job.status = 'cancelled';
          job.error = `instance ${instance.id} was terminated`;
        }
      return send(res, 200, instance);
    }
    if (route === 'POST /v1/jobs') {
      const known = key ? byKey.get(`job:${key}`) : undefined;
      if (known) return send(res, 200, jobOut(jobs.get(known)!));
      const request = (await readBody(req)) as JobRequest;
      const instance = instances.get(request.instance_id);
      if (instance?.status !== 'running')
        return send(res, 409, { error: `instance ${request.instance_id} is not running` });
      const job: StubJob = { id: `j-${randomUUID()}`, status: 'queued', progress: {}, request };
      jobs.set(job.id, job);
      if (key) byKey.set(`job:${key}`, job.id);
      done.set(
        job.id,
        train(job).then(() => job),
      );
      return send(res, 201, jobOut(job));
    }
    if ((m = route.match(/^(GET|DELETE) \/v1\/jobs\/([^/]+)$/))) {
      const job = jobs.get(decodeURIComponent(m[2]!));
      if (!job) return send(res, 404, { error: 'no such job' });
      if (m[1] === 'DELETE' && (job.status === 'queued' || job.status === 'running')) {
        job.status = 'cancelled';
        job.error = 'cancelled by the client';
      }
      return send(res, 200, jobOut(job));
    }
    if ((m = route.match(/^GET \/v1\/jobs\/([^/]+)\/model$/))) {
      const model = jobs.get(decodeURIComponent(m[1]!))?.model;
      if (!model) return send(res, 404, { error: 'no model for this job' });
      res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(model);
      return;
    }
    return send(res, 404, { error: `no route ${route}` });
  }

  const server: Server = createServer((req, res) => {
    handle(req, res).catch((err: Error) => send(res, 500, { error: err.message }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  stub.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return Object.assign(stub, {
    failNextJob(reason: string) {
      failNext = reason;
    },
    addInstance: (tags: Record<string, string>) => {
      const instance = newInstance(tags);
      instance.status = 'running';
      return instance;
    },
    settled: async (jobId: string) => {
      const job = await done.get(jobId);
      if (!job) throw new Error(`the stub has no job ${jobId}`);
      return job;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  });
}

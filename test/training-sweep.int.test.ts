import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import pino from 'pino';
import type { ExternalTrainingJob } from '../activities/training/external';
import { readObject } from '../activities/inspector/frame-objects';
import { sha256Hex } from '../activities/models/artifacts';
import type { DatasetCommit } from '../generated/prisma/client';
import type { WorkerProcess } from '../runtime/worker-process';
import { startCloudProviderStub, type CloudProviderStub } from '../testkit/cloud-provider';
import { trainThroughContract } from '../testkit/external-trainer';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';
import { activitySpan, createTrainingCommit } from '../testkit/training';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * Hyperparameter sweeps on the real stack: a grid runs as child training workflows that queue for
 * the one GPU slot and is ranked by its metric. On the same stack the external trainer is an HTTP
 * endpoint (a loopback server speaking the documented contract, with the built-in trainer behind
 * it), and a cloud GPU provider is configured (the loopback provider stub of testkit/cloud-provider.ts).
 */
const HISTORY = path.join(__dirname, 'histories/training-sweep.json');

let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let commit: DatasetCommit;
let endpoint: http.Server;
let cloud: CloudProviderStub;
const received: ExternalTrainingJob[] = [];

beforeAll(async () => {
  endpoint = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const job = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ExternalTrainingJob;
      received.push(job);
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      trainThroughContract(job, (line) => res.write(`${line}\n`)).then(
        () => res.end(),
        (err: Error) => res.destroy(err),
      );
    });
  });
  await new Promise<void>((r) => endpoint.listen(0, '127.0.0.1', r));
  const { port } = endpoint.address() as AddressInfo;
  cloud = await startCloudProviderStub({ hourlyUsd: 1.5 });
  stack = await startIngestStack({
    env: {
      APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: '4',
      APP_TRAINING__EXTERNAL_ENDPOINT: `http://127.0.0.1:${port}/train`,
      APP_CLOUD__PROVIDER: 'loopback-stub',
      APP_CLOUD__ENDPOINT: cloud.url,
      APP_CLOUD__API_KEY: cloud.apiKey,
      APP_CLOUD__POLL_SECONDS: '0.2',
    },
  });
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  commit = await createTrainingCommit(stack.api.deps, { train: 4, val: 2 });
});

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
  await cloud?.close();
  endpoint?.closeAllConnections();
  await new Promise((r) => endpoint?.close(r));
});

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

describe('a sweep over a 2-point grid', () => {
  let started: Awaited<ReturnType<typeof call>>;
  let ranked: Awaited<ReturnType<typeof call>>;

  beforeAll(async () => {
    started = await call('POST', '/api/training/sweep', stack.reviewer, {
      name: 'lr-sweep',
      dataset_commit_id: commit.commitId,
      config: { epochs: 2, seed: 3 },
      grid: { learning_rate: [0.0005, 0.05] },
      metric: 'val_loss',
    });
    expect(started.status).toBe(202);
    await stack.env.client.workflow.getHandle(started.body.workflow_id).result();
    ranked = await call('GET', '/api/training/sweep/lr-sweep', stack.annotator);
  });

  it('answers 202 with the points it will run and a Location', () => {
    expect(started.headers.get('location')).toBe('/api/training/sweep/lr-sweep');
    expect(started.body).toMatchObject({
      name: 'lr-sweep',
      metric: 'val_loss',
      points: [{ learning_rate: 0.0005 }, { learning_rate: 0.05 }],
      workflow_id: expect.stringMatching(/^training-sweep-/),
    });
  });

  it('ranks its children by the metric, best first, each a completed job with its own model', async () => {
    expect(ranked.status).toBe(200);
    expect(ranked.body.status).toBe('completed');
    const children = ranked.body.children as Array<Record<string, any>>;
    expect(children.map((c) => c.rank)).toEqual([1, 2]);
    expect(children.map((c) => c.status)).toEqual(['completed', 'completed']);
    expect(children[0]!.value).toBeLessThan(children[1]!.value);
    expect(ranked.body.best.job_id).toBe(children[0]!.job_id);
    expect(new Set(children.map((c) => c.config.learning_rate))).toEqual(new Set([0.0005, 0.05]));
    for (const c of children) {
      expect(c).toMatchObject({
        sweep_name: 'lr-sweep',
        workflow_id: `training-${c.job_id}`,
        config: { epochs: 2, seed: 3 },
      });
      // The value ranked is the child's last validation loss, as its persisted curve has it.
      const curve = await call('GET', `/api/training/runs/${c.job_id}/curve`, stack.annotator);
      expect(curve.body.points.at(-1)).toMatchObject({ epoch: 2, val_loss: c.value });
      expect(c.model_version).toBe(`trained-${c.job_id}`);
    }
  });

  it('ran the children one at a time on the slot', async () => {
    const [a, b] = (ranked.body.children as Array<{ workflow_id: string }>).map((c) => c.workflow_id);
    const [a0, a1] = await activitySpan(stack.env.client, a!, 'trainModel');
    const [b0, b1] = await activitySpan(stack.env.client, b!, 'trainModel');
    expect(a1 <= b0 || b1 <= a0).toBe(true);
  });

  it('replays its recorded history', async () => {
    const handle = stack.env.client.workflow.getHandle(started.body.workflow_id);
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
    expect(scheduledActivities(await handle.fetchHistory())).toEqual(['planSweep', 'finishSweep']);
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('refuses a second sweep of the same name, a grid value the config refuses and too many points', async () => {
    const body = { name: 'lr-sweep', dataset_commit_id: commit.commitId, grid: { seed: [1, 2] } };
    expect((await call('POST', '/api/training/sweep', stack.reviewer, body)).status).toBe(409);
    const bad = await call('POST', '/api/training/sweep', stack.reviewer, {
      ...body,
      name: 'bad',
      grid: { learning_rate: [0.1, -1] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'body.grid.learning_rate.1', message: expect.any(String) }]);
    const big = await call('POST', '/api/training/sweep', stack.reviewer, {
      ...body,
      name: 'big',
      grid: { seed: [1, 2, 3, 4, 5], epochs: [1, 2, 3, 4] },
    });
    expect(big.status).toBe(422);
    expect(big.body.detail).toMatch(/20 combinations; a sweep runs at most 16/);
    expect((await call('GET', '/api/training/sweep/nope', stack.annotator)).status).toBe(404);
    expect(await stack.api.deps.db.trainingSweep.count()).toBe(1);
  });
});

describe('the external trainer endpoint', () => {
  it('gets the dataset and the parent as presigned URLs, PUTs the trained file, and the job registers it', async () => {
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      trainer: 'external',
      config: { epochs: 2 },
    });
    expect(res.status).toBe(202);
    await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
    expect(received).toHaveLength(1);
    const doc = received[0]!;
    expect(doc).toMatchObject({
      contract: 'drivelab.training/1',
      job_id: res.body.job_id,
      dataset: { commit_id: commit.commitId, dir: null, class_map: { bus: 5, motorcycle: 3 } },
      parent: { path: null, format: 'yolox', url: expect.stringMatching(/^http/) },
      output: { path: null, url: expect.stringMatching(/^http/) },
      resume_from: null,
    });
    expect(doc.parent.classes).toHaveLength(80);
    expect(doc.dataset.files!.map((f) => f.path).sort()).toEqual(
      (commit.files as Array<{ path: string }>)
        .map((f) => f.path)
        .filter((p) => p.startsWith('images/') || p.startsWith('annotations/'))
        .sort(),
    );
    const { db, storage } = stack.api.deps;
    const job = await db.trainingJob.findUniqueOrThrow({ where: { id: res.body.job_id as string } });
    expect(job).toMatchObject({ status: 'completed', metrics: { reported_by: 'external' } });
    const model = await db.model.findUniqueOrThrow({ where: { modelVersion: job.modelVersion! } });
    const bytes = await readObject(storage, { bucket: storage.bucket('models'), key: model.artifactUri! });
    expect(sha256Hex(bytes)).toBe(model.sha256);
    expect(await db.trainingCurvePoint.count({ where: { jobId: job.id } })).toBe(2);
  });
});

describe('a cloud job', () => {
  it('is parked queued-cloud off the local slot, trains on the cloud session, and registers its file', async () => {
    const connected = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: 1.5 });
    expect(connected.status).toBe(202);
    for (let i = 0; i < 200; i++) {
      const status = await call('GET', '/api/cloud/status', stack.annotator);
      if (status.body.session?.status === 'active') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      compute_target: 'cloud',
      config: { epochs: 2 },
    });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ status: 'queued-cloud', compute_target: 'cloud' });
    const slot = await call('GET', '/api/gpu/slot', stack.annotator);
    expect(slot.body.queue.map((q: { job_id: string }) => q.job_id)).not.toContain(res.body.job_id);

    const handle = stack.env.client.workflow.getHandle(res.body.workflow_id as string);
    await handle.result();
    expect(scheduledActivities(await handle.fetchHistory())).toEqual([
      'prepareTrainingJob',
      'runCloudTraining',
      'registerCloudModel',
    ]);
    const { db, storage } = stack.api.deps;
    const job = await db.trainingJob.findUniqueOrThrow({ where: { id: res.body.job_id as string } });
    expect(job).toMatchObject({ status: 'completed', modelVersion: `trained-${job.id}` });
    const model = await db.model.findUniqueOrThrow({ where: { modelVersion: job.modelVersion! } });
    expect(model).toMatchObject({ origin: 'trained', state: 'candidate', trainingJobId: job.id });
    const bytes = await readObject(storage, { bucket: storage.bucket('models'), key: model.artifactUri! });
    expect(sha256Hex(bytes)).toBe(model.sha256);
    expect((await call('POST', '/api/cloud/disconnect', stack.admin)).status).toBe(200);
  });
});

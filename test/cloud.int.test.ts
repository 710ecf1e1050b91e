import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import {
  createCloudActivities,
  type CloudTrainingHeartbeat,
  type CloudTrainingResult,
} from '../activities/cloud';
import { placeTrainingJob } from '../activities/cloud/placement';
import { currentChampion, sha256Hex } from '../activities/models/artifacts';
import { accruedCostUsd } from '../core/cloud';
import { RefusedError } from '../core/errors';
import { initializerFloats, readOnnx } from '../core/onnx/graph';
import type { CloudSessionOutcome } from '../workflows/cloud';
import { startTestApi, type TestApi } from '../testkit/api';
import { startCloudProviderStub, STUB_EDIT, type CloudProviderStub } from '../testkit/cloud-provider';
import { createCommitFixture } from '../testkit/commits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { testConfig } from '../testkit/stack';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * Cloud GPU sessions on the real stack (docs/cloud.md): PostgreSQL, Temporal (the session
 * workflow on the cpu worker), MinIO (presigned inputs, the stored model) and a provider on
 * loopback that serves the documented contract (testkit/cloud-provider.ts). A second API on the
 * same database has no provider configured; a third ends its sessions after three seconds.
 */
const HISTORY = path.join(__dirname, 'histories/cloud-session.json');
const HISTORY_EXPIRED = path.join(__dirname, 'histories/cloud-session-expired.json');
const PRICE = 2.5;

let stub: CloudProviderStub;
let stack: IngestStack;
/** The same platform with no provider configured. */
let bare: TestApi;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const providerEnv = () => ({
  APP_CLOUD__PROVIDER: 'loopback-stub',
  APP_CLOUD__ENDPOINT: stub.url,
  APP_CLOUD__API_KEY: stub.apiKey,
  APP_CLOUD__POLL_SECONDS: '0.2',
});
const call = (method: string, p: string, token: string, body?: unknown, api: TestApi = stack.api) =>
  api.call(method, p, { token, ...(body === undefined ? {} : { body }) });
const db = () => stack.api.deps.db;
const deps = () => ({
  config: stack.config,
  db: db(),
  storage: stack.api.deps.storage,
  events: stack.api.deps.events,
});

async function waitForStatus(want: string) {
  for (let i = 0; i < 200; i++) {
    const res = await call('GET', '/api/cloud/status', stack.annotator);
    if (res.body.session?.status === want) return res.body;
    await sleep(100);
  }
  throw new Error(`the cloud session never became ${want}`);
}

async function connect(ack = PRICE) {
  const res = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: ack });
  if (res.status !== 202) throw new Error(`connect: ${res.status} ${JSON.stringify(res.body)}`);
  await waitForStatus('active');
  return res.body as { id: string; workflow_id: string; instance_id: string };
}

beforeAll(async () => {
  stub = await startCloudProviderStub({ hourlyUsd: PRICE });
  stack = await startIngestStack({ env: providerEnv() });
  bare = await startTestApi(
    testConfig({ DATABASE_URL: stack.db.url, APP_TEMPORAL__ADDRESS: stack.env.address }),
  );
}, 120_000);

afterAll(async () => {
  await bare?.close();
  await stack?.close();
  await stub?.close();
});

describe('cloud GPU sessions', () => {
  it('refuses by name without a provider, and keeps jobs on the local slot', async () => {
    const res = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: 10 }, bare);
    expect(res.status).toBe(422);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(res.body.detail).toContain('no cloud GPU provider is configured');
    expect(res.body.detail).toContain('APP_CLOUD__PROVIDER and APP_CLOUD__ENDPOINT');
    expect((await call('GET', '/api/cloud/orphans', stack.reviewer, undefined, bare)).status).toBe(422);
    const status = await call('GET', '/api/cloud/status', stack.annotator, undefined, bare);
    expect(status.body).toMatchObject({
      provider: null,
      configured: false,
      missing_settings: ['APP_CLOUD__PROVIDER', 'APP_CLOUD__ENDPOINT'],
      session: null,
    });
    const bareDeps = { db: bare.deps.db, config: bare.deps.config };
    await expect(placeTrainingJob(bareDeps, 'local')).resolves.toEqual({
      status: 'queued',
      cloudSessionId: null,
    });
    await expect(placeTrainingJob(bareDeps, 'cloud')).rejects.toThrow(RefusedError);
    await expect(placeTrainingJob(bareDeps, 'cloud')).rejects.toThrow('APP_CLOUD__PROVIDER');
    // The bad input answers before the configuration is looked at.
    const bad = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: -1, extra: 1 }, bare);
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.ack_hourly_usd',
      'body.extra',
    ]);
    expect(stub.requests).toEqual([]);
  });

  it('refuses an acknowledged price under the quote, naming both, and starts nothing', async () => {
    const res = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: 2.49 });
    expect(res.status).toBe(422);
    expect(res.body.detail).toContain(`quotes ${PRICE} USD per hour for ${stub.gpu}`);
    expect(res.body.detail).toContain('acknowledged 2.49');
    expect(res.body).toMatchObject({ quoted_hourly_usd: PRICE, acknowledged_hourly_usd: 2.49 });
    expect(stub.requests.map((r) => `${r.method} ${r.path}`)).toEqual(['GET /v1/quote']);
    expect(await db().cloudSession.count()).toBe(0);
    expect((await call('POST', '/api/cloud/connect', stack.reviewer, { ack_hourly_usd: 10 })).status).toBe(
      403,
    );
  });

  it('connects one session at a time, parks cloud jobs on it, and disconnects with the cost of its real uptime', async () => {
    const before = Date.now();
    const res = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: 3 });
    expect(res.status).toBe(202);
    expect(res.headers.get('location')).toBe('/api/cloud/status');
    const session = res.body;
    expect(session).toMatchObject({
      status: 'connecting',
      provider: 'loopback-stub',
      hourly_usd: PRICE,
      acknowledged_hourly_usd: 3,
      gpu: stub.gpu,
      workflow_id: `cloud-session-${session.id}`,
    });
    const instance = stub.instances.get(session.instance_id)!;
    expect(instance.tags).toEqual({ owner: 'drivelab', session_id: session.id });
    expect(stub.requests.find((r) => r.path === '/v1/instances')?.idempotencyKey).toBe(session.id);

    const second = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: 3 });
    expect(second.status).toBe(409);
    expect(second.body.detail).toContain(session.id);

    // The workflow saw the instance `starting` once, waited a poll, then made the session active.
    const active = await waitForStatus('active');
    expect(active.session.active_at).not.toBeNull();
    expect(
      stub.requests.filter((r) => r.method === 'GET' && r.path === `/v1/instances/${session.instance_id}`)
        .length,
    ).toBeGreaterThanOrEqual(2);

    const d = { db: db(), config: stack.config };
    expect(await placeTrainingJob(d, 'cloud')).toEqual({
      status: 'queued-cloud',
      cloudSessionId: session.id,
    });
    expect(await placeTrainingJob(d, 'local')).toEqual({ status: 'queued', cloudSessionId: null });
    const parked = await db().trainingJob.create({
      data: {
        status: 'queued-cloud',
        computeTarget: 'cloud',
        trainer: 'head-finetune',
        datasetCommitId: 'not-read-here',
        parentVersion: 'not-read-here',
        workflowId: `training-${randomUUID()}`,
      },
    });

    await sleep(1500);
    const mid = await call('GET', '/api/cloud/status', stack.annotator);
    expect(mid.body.queued_cloud).toMatchObject({ count: 1, jobs: [{ job_id: parked.id }] });
    expect(mid.body.session.uptime_seconds).toBeGreaterThanOrEqual(1);
    expect(mid.body.session.cost_usd).toBeGreaterThanOrEqual((PRICE * 1.5) / 3600 - 1e-6);

    const ended = await call('POST', '/api/cloud/disconnect', stack.admin);
    const after = Date.now();
    expect(ended.status).toBe(200);
    expect(ended.body.queued_cloud_job_ids).toEqual([parked.id]);
    const out = ended.body.session;
    expect(out).toMatchObject({
      id: session.id,
      status: 'disconnected',
      end_reason: 'disconnected by the caller',
    });
    // The cost is the price over the recorded span, which lies within what this test saw elapse.
    const span = Date.parse(out.ended_at) - Date.parse(out.created_at);
    expect(span).toBeGreaterThanOrEqual(1500);
    expect(span).toBeLessThanOrEqual(after - before);
    expect(out.cost_usd).toBe(accruedCostUsd(PRICE, new Date(out.created_at), new Date(out.ended_at)));
    expect(out.cost_usd).toBeGreaterThan(0);
    expect(instance.status).toBe('terminated');

    const outcome = (await stack.env.client.workflow
      .getHandle(session.workflow_id)
      .result()) as CloudSessionOutcome;
    expect(outcome).toEqual({ endedBy: 'disconnect', status: 'disconnected' });
    const handle = stack.env.client.workflow.getHandle(session.workflow_id);
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
    expect(scheduledActivities(await handle.fetchHistory())).toEqual([
      'activateCloudSession',
      'activateCloudSession',
    ]);
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();

    await expect(placeTrainingJob(d, 'cloud')).rejects.toThrow('no cloud GPU session is connected');
    expect((await call('POST', '/api/cloud/disconnect', stack.admin)).status).toBe(409);
    const status = await call('GET', '/api/cloud/status', stack.annotator);
    expect(status.body).toMatchObject({ configured: true, provider: 'loopback-stub', session: null });
    expect(status.body.last_session).toMatchObject({ id: session.id, cost_usd: out.cost_usd });
    const audits = await db().auditLog.findMany({
      where: { subjectId: session.id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audits.map((a) => a.action)).toEqual(['cloud.session.connected', 'cloud.session.disconnected']);
    await db().trainingJob.delete({ where: { id: parked.id } });
  }, 60_000);

  it('finds our stray instances and lost sessions, and terminates them once', async () => {
    const stray = stub.addInstance({ owner: 'drivelab', session_id: randomUUID() });
    const foreign = stub.addInstance({ owner: 'another-installation' });
    const lost = await db().cloudSession.create({
      data: {
        provider: 'loopback-stub',
        status: 'active',
        hourlyUsd: PRICE,
        instanceId: 'i-vanished',
        createdAt: new Date(Date.now() - 600_000),
      },
    });

    expect((await call('GET', '/api/cloud/orphans', stack.annotator)).status).toBe(403);
    const found = await call('GET', '/api/cloud/orphans', stack.reviewer);
    expect(found.status).toBe(200);
    expect(found.body.untracked_instances.map((i: any) => i.instance_id)).toEqual([stray.id]);
    expect(found.body.untracked_instances[0].cost_usd).toBeGreaterThanOrEqual(0);
    expect(found.body.lost_sessions.map((l: any) => l.session.id)).toEqual([lost.id]);

    expect((await call('POST', '/api/cloud/orphans/terminate', stack.reviewer)).status).toBe(403);
    const done = await call('POST', '/api/cloud/orphans/terminate', stack.admin);
    expect(done.status).toBe(200);
    expect(done.body.terminated_instances.map((i: any) => [i.instance_id, i.provider_answer])).toEqual([
      [stray.id, 'terminated'],
    ]);
    expect(done.body.closed_sessions).toEqual([
      expect.objectContaining({
        id: lost.id,
        status: 'orphaned',
        end_reason: expect.stringContaining('i-vanished'),
      }),
    ]);
    expect(stray.status).toBe('terminated');
    expect(foreign.status).toBe('running');
    const record = await db().cloudSession.findFirstOrThrow({ where: { instanceId: stray.id } });
    expect(record).toMatchObject({
      status: 'terminated',
      hourlyUsd: PRICE,
      createdAt: new Date(stray.created_at),
    });
    expect((record.detail as { origin: string }).origin).toBe('orphan');

    const again = await call('POST', '/api/cloud/orphans/terminate', stack.admin);
    expect(again.body).toMatchObject({ terminated_instances: [], closed_sessions: [] });
    const none = await call('GET', '/api/cloud/orphans', stack.reviewer);
    expect(none.body).toMatchObject({ untracked_instances: [], lost_sessions: [] });
    expect(await db().auditLog.count({ where: { action: 'cloud.orphans.terminated' } })).toBe(1);
  });

  it('trains a parked job on the provider and stores the ONNX file it returns', async () => {
    const session = await connect();
    const parent = await currentChampion(stack.api.deps);
    const parentBytes = fs.readFileSync(
      path.join(stack.config.models.dir, stack.config.models.closedSetDetector),
    );
    const commit = await createCommitFixture(stack.api.deps, {
      name: `cloud-${randomUUID()}`,
      objects: [{ object_id: randomUUID(), class_name: 'car', x1: 10, y1: 10, x2: 60, y2: 40 }],
      files: { 'images/frame-0.jpg': Buffer.from('not decoded by the stub, only checked') },
    });
    const newJob = async () => {
      const placed = await placeTrainingJob({ db: db(), config: stack.config }, 'cloud');
      const id = randomUUID();
      await db().trainingJob.create({
        data: {
          id,
          status: placed.status,
          computeTarget: 'cloud',
          trainer: 'head-finetune',
          datasetCommitId: commit.commitId,
          parentVersion: parent.modelVersion,
          config: { epochs: 3 },
          // Where the training routes keep the session a parked job waits for.
          progress: { cloud_session_id: placed.cloudSessionId },
          workflowId: `training-${id}`,
        },
      });
      return { jobId: id, cloudSessionId: placed.cloudSessionId! };
    };
    const { runCloudTraining } = createCloudActivities(deps());
    const quiet = { logger: new DefaultLogger('ERROR') };

    const input = await newJob();
    expect(input.cloudSessionId).toBe(session.id);
    const beats: CloudTrainingHeartbeat[] = [];
    const first = new MockActivityEnvironment({ attempt: 1 }, quiet);
    first.on('heartbeat', (d: CloudTrainingHeartbeat) => beats.push(d));
    const result: CloudTrainingResult = await first.run(runCloudTraining, input);

    const [job] = [...stub.jobs.values()];
    expect(stub.jobs.size).toBe(1);
    expect(job!.status).toBe('succeeded');
    expect(job!.request).toMatchObject({
      instance_id: session.instance_id,
      tags: { owner: 'drivelab', session_id: session.id, job_id: input.jobId },
      trainer: 'head-finetune',
      config: { epochs: 3 },
      parent_model: {
        version: parent.modelVersion,
        sha256: sha256Hex(parentBytes),
        size_bytes: parentBytes.length,
      },
      dataset: { commit_id: commit.commitId },
    });
    // The stub fetched every input through its presigned URL and checked it.
    const files = commit.files as Array<{ path: string }>;
    expect(job!.request.dataset.files.map((f) => f.path).sort()).toEqual(files.map((f) => f.path).sort());
    expect(result.metrics).toMatchObject({
      dataset_files_verified: files.length,
      parent_sha256: sha256Hex(parentBytes),
    });

    const stored = await readModel(result.modelKey);
    expect(sha256Hex(stored)).toBe(result.sha256);
    expect(result).toMatchObject({ sha256: job!.result!.sha256, sizeBytes: stored.length });
    expect(result.sha256).not.toBe(sha256Hex(parentBytes));
    const before = initializerFloats(readOnnx(parentBytes), STUB_EDIT.initializer);
    const after = initializerFloats(readOnnx(stored), STUB_EDIT.initializer);
    expect(after[STUB_EDIT.index]! - before[STUB_EDIT.index]!).toBeCloseTo(STUB_EDIT.delta, 5);
    expect([...after].filter((v, i) => v !== before[i]).length).toBe(1);

    const row = await db().trainingJob.findUniqueOrThrow({ where: { id: input.jobId } });
    expect(row.progress).toMatchObject({
      cloud_session_id: session.id,
      step: 'done',
      model_key: result.modelKey,
      cloud: {
        provider: 'loopback-stub',
        session_id: session.id,
        provider_job_id: job!.id,
        status: 'succeeded',
      },
    });
    expect(beats.at(-1)).toMatchObject({ providerJobId: job!.id, status: 'succeeded' });

    // A retried attempt follows the job its heartbeat names: nothing is submitted (or paid for) twice.
    const retry = new MockActivityEnvironment({ attempt: 2, heartbeatDetails: beats.at(-1) }, quiet);
    await expect(retry.run(runCloudTraining, input)).resolves.toEqual(result);
    expect(stub.requests.filter((r) => r.method === 'POST' && r.path === '/v1/jobs')).toHaveLength(1);

    // The provider's failure, by its own reason, and no retry.
    stub.failNextJob('CUDA error: out of memory on the instance');
    const failed = await new MockActivityEnvironment({ attempt: 1 }, quiet)
      .run(runCloudTraining, await newJob())
      .catch((err: unknown) => err);
    expect(failed).toBeInstanceOf(ApplicationFailure);
    expect(failed).toMatchObject({ type: 'CloudTrainingFailed', nonRetryable: true });
    expect((failed as Error).message).toContain('CUDA error: out of memory on the instance');

    const parkedThenEnded = await newJob();
    expect((await call('POST', '/api/cloud/disconnect', stack.admin)).status).toBe(200);
    const orphaned = await new MockActivityEnvironment({ attempt: 1 }, quiet)
      .run(runCloudTraining, parkedThenEnded)
      .catch((err: unknown) => err);
    expect(orphaned).toMatchObject({ type: 'CloudSessionEnded', nonRetryable: true });
    expect((orphaned as Error).message).toContain(`cloud session ${session.id} is disconnected`);
  }, 120_000);

  it('ends a session at its maximum hours from the workflow’s timer, terminating its instance', async () => {
    const short = await startTestApi(
      testConfig({
        DATABASE_URL: stack.db.url,
        APP_TEMPORAL__ADDRESS: stack.env.address,
        ...providerEnv(),
        APP_CLOUD__MAX_SESSION_HOURS: String(3 / 3600),
      }),
    );
    try {
      const res = await call('POST', '/api/cloud/connect', stack.admin, { ack_hourly_usd: PRICE }, short);
      expect(res.status).toBe(202);
      expect(Date.parse(res.body.ends_at) - Date.parse(res.body.created_at)).toBe(3000);
      const handle = stack.env.client.workflow.getHandle(res.body.workflow_id);
      expect((await handle.result()) as CloudSessionOutcome).toEqual({
        endedBy: 'expire',
        status: 'disconnected',
      });
      const row = await db().cloudSession.findUniqueOrThrow({ where: { id: res.body.id } });
      expect(row.status).toBe('disconnected');
      expect(row.endedAt!.getTime()).toBeGreaterThanOrEqual(Date.parse(res.body.ends_at));
      expect((row.detail as { end_reason: string }).end_reason).toContain('APP_CLOUD__MAX_SESSION_HOURS');
      expect(stub.instances.get(res.body.instance_id)!.status).toBe('terminated');
      expect(
        await db().auditLog.count({ where: { subjectId: row.id, action: 'cloud.session.expired' } }),
      ).toBe(1);

      await recordHistoryIfAsked(HISTORY_EXPIRED, () => handle.fetchHistory());
      expect(scheduledActivities(await handle.fetchHistory())).toEqual([
        'activateCloudSession',
        'activateCloudSession',
        'endCloudSession',
      ]);
      await expect(
        replayRecordedHistory(HISTORY_EXPIRED, require.resolve('../workflows'), 'recorded'),
      ).resolves.toBeUndefined();
    } finally {
      await short.close();
    }
  }, 60_000);
});

async function readModel(key: string): Promise<Buffer> {
  const { storage } = stack.api.deps;
  const chunks: Buffer[] = [];
  for await (const c of (await storage.client.getObject(
    storage.bucket('models'),
    key,
  )) as AsyncIterable<Buffer>)
    chunks.push(c);
  return Buffer.concat(chunks);
}

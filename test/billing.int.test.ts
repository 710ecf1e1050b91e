import { createPublicKey, verify } from 'node:crypto';
import { randomUUID } from 'node:crypto';
import pino from 'pino';
import { canonicalJson } from '../core/datasets/manifest';
import type { WorkerProcess } from '../runtime/worker-process';
import { createCommitFixture } from '../testkit/commits';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * Spend and billing on the real stack (docs/billing.md): corpus runs and training priced by the
 * cost gate before they start — refused with the numbers over the per-job cap, leaving nothing
 * behind — and recorded at their real cost when they end; usage per period, the month's invoice,
 * and a commit's signed cost certificate.
 *
 * Prices: the GPU slot at 10 USD an hour, an hour per frame for a corpus run (no auto-label job has
 * been measured here), 10 minutes per training epoch, a per-job cap of 25 USD.
 */
let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let small: string;
let large: string;

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });

beforeAll(async () => {
  stack = await startIngestStack({
    env: {
      APP_COST__GPU_HOURLY_USD: '10',
      APP_COST__FRAME_SECONDS: '3600',
      APP_COST__EPOCH_MINUTES: '10',
      APP_COST__PER_JOB_CAP_USD: '25',
      APP_COST__WINDOW_CAP_USD: '',
      APP_COST__LABEL_HOURLY_USD: '30',
    },
  });
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  const deps = { db: stack.api.deps.db, storage: stack.api.deps.storage };
  small = (await createSessionFixture(deps, { frames: 1, storeImages: false })).session.id;
  large = (await createSessionFixture(deps, { frames: 3, storeImages: false })).session.id;
}, 120_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('the cost gate at the starts', () => {
  it('refuses a corpus run over the per-job cap with the numbers, and leaves no run and no spend behind', async () => {
    const { db } = stack.api.deps;
    const res = await call('POST', '/api/drivable/backfill', stack.admin, { session_ids: [large] });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(
      /^drivable-backfill run [0-9a-f-]+ refused by the cost gate: the job would cost 30 USD \(3 GPU hours × 10 USD per hour\), over the per-job cap of 25 USD$/,
    );
    expect(res.body.cost_gate).toMatchObject({
      decision: 'refuse',
      cost_usd: 30,
      per_job: { cap_usd: 25, over: true },
      caps_from: { per_job: 'config' },
    });
    expect(await db.agentRun.count({ where: { kind: 'drivable-backfill' } })).toBe(0);
    expect(await db.spendRecord.count()).toBe(0);
  });

  it('refuses a training job whose epochs would cost more than the cap, before any workflow starts', async () => {
    const { db } = stack.api.deps;
    const commit = await createCommitFixture(stack.api.deps, {
      name: `trainable ${randomUUID().slice(0, 6)}`,
      objects: [{ object_id: randomUUID(), class_name: 'car' }],
      files: {
        'annotations/instances_train.json': '{}',
        'annotations/instances_val.json': '{}',
        'images/train/a.jpg': 'x',
        'images/val/b.jpg': 'x',
      },
      sessionIds: [small],
    });
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      config: { epochs: 20 },
    });
    expect([res.status, res.body.cost_gate?.cost_usd]).toEqual([422, 33.33333]);
    expect(res.body.detail).toContain(
      'refused by the cost gate: the job would cost 33.33333 USD (3.333333 GPU hours × 10 USD per hour)',
    );
    expect(await db.trainingJob.count()).toBe(0);
    expect(await db.spendRecord.count()).toBe(0);
  });

  it('lets a run within the cap start with its estimate, and records what it really cost when it ends', async () => {
    const { db } = stack.api.deps;
    const res = await call('POST', '/api/agent/reanalyze/all', stack.admin, { session_ids: [small] });
    expect([res.status, res.body.detail]).toEqual([202, undefined]);
    const estimate = await db.spendRecord.findFirstOrThrow({
      where: { subjectId: res.body.run_id, basis: 'estimate' },
    });
    expect(estimate).toMatchObject({ kind: 'corpus_run', gpuHours: 1, hourlyUsd: 10, usd: 10 });
    await stack.env.client.workflow.getHandle('pii-recheck-all').result();
    const actual = await db.spendRecord.findFirstOrThrow({
      where: { subjectId: res.body.run_id, basis: 'actual' },
    });
    const run = await db.agentRun.findUniqueOrThrow({ where: { id: res.body.run_id } });
    const hours = (run.finishedAt!.getTime() - run.createdAt.getTime()) / 3_600_000;
    expect(actual.gpuHours).toBeCloseTo(hours, 5);
    expect(actual.usd).toBeCloseTo(hours * 10, 5);
    expect(actual.usd).toBeLessThan(1);
  });
});

describe('billing', () => {
  it('reports usage per day with the actual in place of the estimate, every day listed', async () => {
    const res = await call('GET', '/api/billing/usage?period=day', stack.reviewer);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.records).toBe(1);
    expect(res.body.by_kind.corpus_run.records).toBe(1);
    expect(res.body.usd).toBeLessThan(1);
    expect(res.body.periods.length).toBeGreaterThanOrEqual(30);
    expect(res.body.periods.reduce((s: number, p: { records: number }) => s + p.records, 0)).toBe(1);
    const weeks = await call('GET', '/api/billing/usage?period=week', stack.reviewer);
    expect(weeks.body.usd).toBe(res.body.usd);
    expect((await call('GET', '/api/billing/usage?period=hour', stack.reviewer)).status).toBe(422);
    expect(
      (
        await call(
          'GET',
          '/api/billing/usage?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z',
          stack.reviewer,
        )
      ).status,
    ).toBe(422);
    expect((await call('GET', '/api/billing/usage', stack.annotator)).status).toBe(403);
  });

  it("lists the month's invoice line by line", async () => {
    const month = new Date().toISOString().slice(0, 7);
    const res = await call('GET', `/api/billing/invoice?month=${month}`, stack.admin);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ month, records: 1, estimated_lines: 0 });
    expect(res.body.lines).toEqual([
      expect.objectContaining({ kind: 'corpus_run', basis: 'actual', hourly_usd: 10 }),
    ]);
    expect((await call('GET', '/api/billing/invoice?month=2026-13', stack.admin)).status).toBe(422);
    expect((await call('GET', '/api/billing/invoice', stack.reviewer)).status).toBe(403);
    const empty = await call('GET', '/api/billing/invoice?month=2020-01', stack.admin);
    expect(empty.body).toMatchObject({ usd: 0, lines: [] });
  });

  it("certifies a commit's compute and labelling cost, signed so that anyone with the public key can check it", async () => {
    const { db } = stack.api.deps;
    const started = new Date(Date.now() - 3_600_000);
    const job = await db.autolabelJob.create({
      data: {
        sessionId: small,
        state: 'completed',
        startedAt: started,
        finishedAt: new Date(started.getTime() + 30 * 60_000),
        workflowId: `autolabel-${small}`,
      },
    });
    const frame = await db.frame.findFirstOrThrow({ where: { sessionId: small } });
    const car = await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } });
    const object = await db.annoObject.create({
      data: { frameId: frame.id, classId: car.id, bbox: [1, 1, 9, 9], source: 'human', state: 'accepted' },
    });
    for (const ms of [60_000, 120_000])
      await db.review.create({
        data: {
          objectId: object.id,
          reviewer: 'r',
          action: 'accept',
          before: {},
          after: {},
          timeSpentMs: ms,
        },
      });
    const commit = await createCommitFixture(stack.api.deps, {
      name: `certified ${randomUUID().slice(0, 6)}`,
      objects: [{ object_id: object.id, class_name: 'car' }],
      sessionIds: [small],
    });
    const res = await call('POST', `/api/billing/certify/${commit.commitId}`, stack.reviewer);
    expect([res.status, res.body.detail]).toEqual([200, undefined]);
    expect(res.body.compute).toMatchObject({ gpu_hourly_usd: 10, gpu_hours: 0.5, usd: 5 });
    expect(res.body.compute.jobs).toEqual([expect.objectContaining({ job_id: job.id, gpu_hours: 0.5 })]);
    expect(res.body.labelling).toEqual({ hourly_usd: 30, reviews: 2, hours: 0.05, usd: 1.5 });
    expect(res.body.total_usd).toBe(6.5);
    const { certificate_id, signature, public_key_pem, ...body } = res.body;
    expect(
      verify(
        null,
        Buffer.from(canonicalJson(body)),
        createPublicKey(public_key_pem),
        Buffer.from(signature, 'base64'),
      ),
    ).toBe(true);
    const kept = await db.costCertificate.findUniqueOrThrow({ where: { id: certificate_id } });
    expect(kept).toMatchObject({ commitId: commit.commitId, totalUsd: 6.5, signature });
    expect((await call('POST', `/api/billing/certify/${'a'.repeat(64)}`, stack.reviewer)).status).toBe(404);
    expect((await call('POST', '/api/billing/certify/nope', stack.reviewer)).status).toBe(422);
  });
});

import path from 'node:path';
import pino from 'pino';
import { readObject } from '../activities/inspector/frame-objects';
import { sha256Hex } from '../activities/models/artifacts';
import type { DatasetCommit } from '../generated/prisma/client';
import type { WorkerProcess } from '../runtime/worker-process';
import { startTestApi, type TestApi } from '../testkit/api';
import { externalTrainerCommand } from '../testkit/external-trainer';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { openEventStream, type SseEvent } from '../testkit/sse';
import { testConfig } from '../testkit/stack';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';
import { activitySpan, createTrainingCommit } from '../testkit/training';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * Training jobs on the real stack: PostgreSQL, MinIO, a private Temporal server with the real cpu
 * workflows, and a one-slot gpu worker that fine-tunes yolox_nano.onnx's head on real photographs
 * (a dataset commit with COCO train/val splits and images). The external trainer is a real command
 * (testkit/external-trainer.ts) speaking the documented contract.
 */
const HISTORY = path.join(__dirname, 'histories/training.json');
const EPOCHS = 3;

let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> } | undefined;
let commit: DatasetCommit;

async function startGpu() {
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
}

beforeAll(async () => {
  stack = await startIngestStack({
    env: {
      APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: '4',
      APP_TRAINING__EXTERNAL_COMMAND: externalTrainerCommand(),
    },
  });
  commit = await createTrainingCommit(stack.api.deps, { train: 4, val: 2 });
});

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });

async function startJob(body: Record<string, unknown>) {
  const res = await call('POST', '/api/training/start', stack.reviewer, {
    dataset_commit_id: commit.commitId,
    ...body,
  });
  if (res.status !== 202) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  return res;
}

const result = (workflowId: string) => stack.env.client.workflow.getHandle(workflowId).result();

const modelFile = (key: string) =>
  readObject(stack.api.deps.storage, { bucket: stack.api.deps.storage.bucket('models'), key });

const epochsOf = (events: SseEvent[]) =>
  events.filter((e) => e.event === 'training.epoch').map((e) => (e.data as { epoch: number }).epoch);

describe('a head fine-tuning job, its curve streamed and persisted', () => {
  let started: Awaited<ReturnType<typeof startJob>>;
  let live: SseEvent[];
  let jobId: string;

  beforeAll(async () => {
    // The gpu worker starts only once the stream is open: every epoch the stream shows is then live.
    started = await startJob({ name: 'bus and motorcycle', config: { epochs: EPOCHS, seed: 7 } });
    jobId = started.body.job_id as string;
    const stream = await openEventStream(stack.api.url, `/api/events/training/${jobId}`, stack.annotator, {
      queryToken: true,
    });
    expect(stream.status).toBe(200);
    const reading = stream.readUntil(() => false, 600_000);
    await startGpu();
    await result(started.body.workflow_id);
    live = await reading;
  });

  it('answers 202 with the queued job, its workflow training-<job_id> and a Location', () => {
    expect(started.headers.get('location')).toBe(`/api/training/${jobId}`);
    expect(started.body).toMatchObject({
      status: 'queued',
      task: 'detection',
      trainer: 'head-finetune',
      compute_target: 'local',
      workflow_id: `training-${jobId}`,
      dataset_commit_id: commit.commitId,
      parent_model_version: expect.stringMatching(/^yolox_nano\.onnx@[0-9a-f]{12}$/),
      config: { epochs: EPOCHS, seed: 7, heads: ['cls', 'obj'] },
    });
  });

  it('streams every epoch once, live, between running and completed, and then ends', () => {
    const types = live.map((e) => e.event).filter((t) => t !== 'heartbeat');
    expect(types[0]).toBe('ready');
    expect(
      live.filter((e) => e.event === 'training.status').map((e) => (e.data as { status: string }).status),
    ).toEqual(['queued', 'running', 'completed']);
    expect(types.at(-1)).toBe('training.status');
    expect(epochsOf(live)).toEqual([1, 2, 3]);
    for (const e of live.filter((x) => x.event === 'training.epoch')) {
      const d = e.data as { persisted?: boolean; train_loss: number; metrics: { map50: number } };
      expect(d.persisted).toBeUndefined();
      expect(Number.isFinite(d.train_loss)).toBe(true);
      expect(d.metrics.map50).toBeGreaterThanOrEqual(0);
    }
  });

  it('persists the curve the stream showed, and a later stream replays it, then the final status', async () => {
    const curve = await call('GET', `/api/training/runs/${jobId}/curve`, stack.annotator);
    expect(curve.status).toBe(200);
    expect(curve.body.points.map((p: { epoch: number }) => p.epoch)).toEqual([1, 2, 3]);
    const streamed = live
      .filter((e) => e.event === 'training.epoch')
      .map((e) => e.data as Record<string, unknown>);
    curve.body.points.forEach((p: Record<string, unknown>, i: number) => {
      expect(p.train_loss).toBe(streamed[i]!.train_loss);
      expect(p.val_loss).toBe(streamed[i]!.val_loss);
      expect(p.metrics).toEqual(streamed[i]!.metrics);
    });
    const again = await openEventStream(stack.api.url, `/api/events/training/${jobId}`, stack.annotator);
    const replayed = await again.readUntil(() => false, 30_000);
    expect(epochsOf(replayed)).toEqual([1, 2, 3]);
    expect(
      replayed
        .filter((e) => e.event === 'training.epoch')
        .every((e) => (e.data as { persisted: boolean }).persisted),
    ).toBe(true);
    expect(replayed.at(-1)).toMatchObject({ event: 'training.status', data: { status: 'completed' } });
  });

  it('registers a candidate model whose stored file matches its SHA-256 and differs from the parent', async () => {
    const { db } = stack.api.deps;
    const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({ status: 'completed', modelVersion: `trained-${jobId}`, error: null });
    expect(job.finishedAt).not.toBeNull();
    const model = await db.model.findUniqueOrThrow({ where: { modelVersion: `trained-${jobId}` } });
    const parent = await db.model.findUniqueOrThrow({ where: { modelVersion: job.parentVersion } });
    expect(model).toMatchObject({
      origin: 'trained',
      state: 'candidate',
      format: 'yolox',
      task: 'detection',
      parentVersion: parent.modelVersion,
      datasetCommitId: commit.commitId,
      trainingJobId: jobId,
      trainingConfig: { trainer: 'head-finetune', epochs: EPOCHS, seed: 7 },
    });
    const bytes = await modelFile(model.artifactUri!);
    expect(sha256Hex(bytes)).toBe(model.sha256);
    expect(bytes.length).toBe(model.sizeBytes);
    expect(model.sha256).not.toBe(parent.sha256);
    const metrics = model.metrics as {
      trained: { map50: number };
      parent: { map50: number };
      train_images: number;
    };
    expect(metrics.train_images).toBe(4);
    expect(metrics.trained.map50).toBeGreaterThanOrEqual(0);
    expect(metrics.parent.map50).toBeGreaterThanOrEqual(0);
  });

  it('reports the boxes of a class the parent cannot output, and does not train them', async () => {
    const got = await call('GET', `/api/training/${jobId}`, stack.annotator);
    expect(got.status).toBe(200);
    expect(got.body.metrics.dataset).toMatchObject({
      class_map: { bus: 5, motorcycle: 3 },
      unmapped: { pothole: expect.stringMatching(/no class/) },
      splits: { train: { images: 4, boxes: 8, skipped: { pothole: 4 } }, val: { images: 2, boxes: 4 } },
    });
    expect(got.body.progress).toMatchObject({ epoch: EPOCHS, epochs: EPOCHS, resumed_from: 0, attempt: 1 });
  });

  it('lists the job, as a job and as a run, filtered by status', async () => {
    const list = await call('GET', '/api/training?status=completed&limit=1', stack.annotator);
    expect(list.status).toBe(200);
    expect(list.body.items.map((j: { job_id: string }) => j.job_id)).toContain(jobId);
    const queued = await call('GET', '/api/training?status=queued', stack.annotator);
    expect(queued.body.items.map((j: { job_id: string }) => j.job_id)).not.toContain(jobId);
    const runs = await call('GET', '/api/training/runs', stack.annotator);
    const run = runs.body.items.find((r: { run_id: string }) => r.run_id === jobId);
    expect(run).toMatchObject({
      status: 'completed',
      epochs: EPOCHS,
      epochs_done: EPOCHS,
      model_version: `trained-${jobId}`,
    });
    expect(run.best.epoch).toBeGreaterThanOrEqual(1);
  });

  it('replays its recorded history: prepare on the cpu queue, then one training activity', async () => {
    const handle = stack.env.client.workflow.getHandle(started.body.workflow_id);
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
    expect(scheduledActivities(await handle.fetchHistory())).toEqual(['prepareTrainingJob', 'trainModel']);
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });
});

describe('the external trainer command', () => {
  it('trains through the documented contract and registers its file like a built-in job', async () => {
    const started = await startJob({ trainer: 'external', config: { epochs: 2 } });
    const jobId = started.body.job_id as string;
    await result(started.body.workflow_id);
    const { db } = stack.api.deps;
    const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({ status: 'completed', trainer: 'external' });
    expect(job.metrics).toMatchObject({ reported_by: 'external', trained: { map50: expect.any(Number) } });
    expect(job.checkpoint).toEqual({ epoch: 2, key: `training/${jobId}/checkpoint.json` });
    const points = await db.trainingCurvePoint.findMany({ where: { jobId }, orderBy: { epoch: 'asc' } });
    expect(points.map((p) => p.epoch)).toEqual([1, 2]);
    const model = await db.model.findFirstOrThrow({ where: { trainingJobId: jobId } });
    expect(sha256Hex(await modelFile(model.artifactUri!))).toBe(model.sha256);
  });
});

describe('the GPU slot', () => {
  it('never runs a training job beside an auto-label session: one waits while the other holds the slot', async () => {
    const { db } = stack.api.deps;
    const made = await createVehicleSession(stack.api.deps, await vehicleFrames(6, { width: 640 }));
    const training = await startJob({ config: { epochs: 2 } });
    const autolabel = await call('POST', '/api/autolabel/start', stack.reviewer, {
      session_id: made.session.id,
    });
    expect(autolabel.status).toBe(202);
    const ids = [training.body.job_id, autolabel.body.job_id];

    let seen: { holder: string; kind: string; waiting: string } | null = null;
    for (let i = 0; i < 400 && !seen; i++) {
      const slot = await call('GET', '/api/gpu/slot', stack.annotator);
      expect(slot.status).toBe(200);
      const holder = slot.body.holder as { holder_id: string; kind: string } | null;
      const waiting = (slot.body.queue as Array<{ job_id: string }>)
        .map((q) => q.job_id)
        .filter((id) => ids.includes(id));
      if (holder && ids.includes(holder.holder_id) && waiting.length === 1 && waiting[0] !== holder.holder_id)
        seen = { holder: holder.holder_id, kind: holder.kind, waiting: waiting[0]! };
      else await new Promise((r) => setTimeout(r, 50));
    }
    expect(seen).not.toBeNull();
    expect(seen!.kind).toBe(seen!.holder === training.body.job_id ? 'training' : 'autolabel');

    await Promise.all([result(training.body.workflow_id), result(autolabel.body.workflow_id)]);
    // The histories say when each slot-holding activity started and ended: the spans do not meet.
    const client = stack.env.client;
    const [t0, t1] = await activitySpan(client, training.body.workflow_id, 'trainModel');
    const [a0, a1] = await activitySpan(client, autolabel.body.workflow_id, 'autolabelSession');
    expect(t1 <= a0 || a1 <= t0).toBe(true);
    expect(await db.gpuSlot.count()).toBe(0);
    const free = await call('GET', '/api/gpu/slot', stack.annotator);
    expect(free.body).toMatchObject({ busy: false, holder: null, queue: [] });
  });
});

describe('refusals', () => {
  it('refuses 3D training by name', async () => {
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      task: 'detection3d',
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/3D training is refused/);
  });

  it('answers 404 for an unknown dataset commit or parent, and 403 to an annotator', async () => {
    const unknown = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: 'a'.repeat(64),
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.detail).toMatch(/no dataset commit a{64}/);
    const parent = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      parent_model_version: 'nope@1',
    });
    expect(parent.status).toBe(404);
    const annotator = await call('POST', '/api/training/start', stack.annotator, {
      dataset_commit_id: commit.commitId,
    });
    expect(annotator.status).toBe(403);
  });

  it('refuses a commit without a val split, and the cloud without a provider, by name', async () => {
    const trainOnly = await createTrainingCommit(stack.api.deps, { train: 1, val: 0 });
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: trainOnly.commitId,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/has no COCO val split \(annotations\/instances_val\.json\)/);
    const cloud = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      compute_target: 'cloud',
    });
    expect(cloud.status).toBe(422);
    expect(cloud.body.detail).toMatch(/APP_CLOUD__/);
  });

  it('refuses the external trainer by name where none is configured, and says so in the tasks', async () => {
    let bare: TestApi | undefined;
    try {
      bare = await startTestApi(
        testConfig({ DATABASE_URL: stack.db.url, APP_TEMPORAL__ADDRESS: stack.env.address }),
      );
      const res = await bare.call('POST', '/api/training/start', {
        token: stack.reviewer,
        body: { dataset_commit_id: commit.commitId, trainer: 'external' },
      });
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(/APP_TRAINING__EXTERNAL_COMMAND.*APP_TRAINING__EXTERNAL_ENDPOINT/);
      const tasks = await bare.call('GET', '/api/training/tasks', { token: stack.annotator });
      expect(tasks.body.tasks).toEqual([
        expect.objectContaining({
          task: 'detection',
          trainer: 'head-finetune',
          available: true,
          device: 'cpu',
        }),
        expect.objectContaining({
          trainer: 'external',
          available: false,
          reason: expect.stringMatching(/not configured/),
        }),
        expect.objectContaining({
          task: 'detection3d',
          available: false,
          reason: expect.stringMatching(/3D/),
        }),
      ]);
    } finally {
      await bare?.close();
    }
    const configured = await call('GET', '/api/training/tasks', stack.annotator);
    expect(configured.body.tasks[1]).toMatchObject({ trainer: 'external', available: true });
  });

  it('answers 409 to a cancel of a finished job, and 404 to an unknown one', async () => {
    const [done] = await stack.api.deps.db.trainingJob.findMany({ where: { status: 'completed' }, take: 1 });
    const res = await call('POST', `/api/training/${done!.id}/cancel`, stack.reviewer);
    expect(res.status).toBe(409);
    const unknown = await call(
      'POST',
      '/api/training/00000000-0000-4000-8000-000000000000/cancel',
      stack.reviewer,
    );
    expect(unknown.status).toBe(404);
  });
});

describe('the job list', () => {
  it('pages through every job once, newest first, by next_cursor', async () => {
    const all = await stack.api.deps.db.trainingJob.findMany({
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    });
    expect(all.length).toBeGreaterThanOrEqual(3);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await call(
        'GET',
        `/api/training?limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        stack.annotator,
      );
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(1);
      seen.push(...page.body.items.map((j: { job_id: string }) => j.job_id));
      cursor = page.body.next_cursor as string | null;
    } while (cursor);
    expect(seen).toEqual(all.map((j) => j.id));
    const gone = await call(
      'GET',
      '/api/training?cursor=00000000-0000-4000-8000-000000000000',
      stack.annotator,
    );
    expect(gone).toMatchObject({ status: 200, body: { items: [], next_cursor: null } });
  });
});

import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pino from 'pino';
import { storeModelArtifact } from '../activities/models/artifacts';
import type { WorkerProcess } from '../runtime/worker-process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { COCO_MOTORCYCLE, withoutCocoClass } from '../testkit/models';
import { createTrainingCommit } from '../testkit/training';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * Experiments on the real stack (docs/experiments.md): two real head fine-tuning jobs on a dataset
 * commit of real photographs (two learning rates), attached to an experiment and compared side by
 * side; what a model misses on a sealed gold set and how far its recall can be trusted, read from a
 * model that cannot output motorcycles (its bias edited in the ONNX graph, so every motorcycle is a
 * miss by construction); the tracking evaluation refused by name.
 */
const NO_MOTO = 'yolox-nano-no-motorcycle@exp';
const EPOCHS = 2;
const LEARNING_RATES = [0.003, 0.006];

let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> };
let sessionId: string;
let goldId: string;
let noMotoRun: string;
const jobs: Array<{ job_id: string; model_version: string }> = [];
const objects: Record<'bus' | 'motorcycle', string[]> = { bus: [], motorcycle: [] };

const api = (method: string, url: string, token: string, body?: unknown) =>
  stack.api.call(method, url, { token, ...(body === undefined ? {} : { body }) });
const db = () => stack.api.deps.db;
const done = (workflowId: string) => stack.env.client.workflow.getHandle(workflowId).result();

beforeAll(async () => {
  stack = await startIngestStack();
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };

  const commit = await createTrainingCommit(stack.api.deps, { train: 4, val: 2 });
  for (const [i, learning_rate] of LEARNING_RATES.entries()) {
    const res = await api('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commit.commitId,
      name: `lr ${learning_rate}`,
      config: { epochs: EPOCHS, learning_rate, seed: 7 + i },
    });
    expect(res.status).toBe(202);
    await done(res.body.workflow_id as string);
    const job = await db().trainingJob.findUniqueOrThrow({ where: { id: res.body.job_id as string } });
    expect(job.status).toBe('completed');
    jobs.push({ job_id: job.id, model_version: job.modelVersion! });
  }

  const frames = await vehicleFrames(3, { width: 640, step: 0.03 });
  const made = await createVehicleSession(stack.api.deps, frames);
  sessionId = made.session.id;
  for (const [i, f] of frames.entries())
    for (const cls of ['bus', 'motorcycle'] as const) {
      const res = await api('POST', `/api/frames/${made.frames[i]!.id}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: f.truth[cls],
      });
      expect(res.status).toBe(201);
      objects[cls].push(res.body.id as string);
    }
  const seal = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
    name: 'street',
    session_id: sessionId,
  });
  expect(seal.status).toBe(201);
  goldId = seal.body.id as string;

  const shipped = fs.readFileSync(
    path.resolve(stack.config.models.dir, stack.config.models.closedSetDetector),
  );
  await storeModelArtifact(stack.api.deps, NO_MOTO, withoutCocoClass(shipped, COCO_MOTORCYCLE));
  const reg = await api('POST', '/api/govern/registry/register', stack.reviewer, { model_version: NO_MOTO });
  expect(reg.status).toBe(201);
  const run = await api('POST', '/api/inference-runs', stack.reviewer, {
    mode: 'gpu',
    gold_id: goldId,
    model_version: NO_MOTO,
  });
  expect(run.status).toBe(202);
  await done(run.body.workflow_id as string);
  noMotoRun = run.body.id as string;
  // Each trained model's run on the gold set, registered as its evidence there, for the comparison.
  for (const j of jobs) {
    const r = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'gpu',
      gold_id: goldId,
      model_version: j.model_version,
    });
    expect(r.status).toBe(202);
    await done(r.body.workflow_id as string);
    const evidence = await api('POST', '/api/govern/registry/register_run', stack.reviewer, {
      run_id: r.body.id,
      gold_id: goldId,
    });
    expect(evidence.status).toBe(201);
  }
}, 600_000);

afterAll(async () => {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
});

describe('experiments', () => {
  const runIds: string[] = [];

  it('creates a named experiment once', async () => {
    const res = await api('POST', '/api/experiments', stack.reviewer, {
      name: 'head-lr',
      description: 'does a doubled learning rate help?',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'head-lr',
      description: 'does a doubled learning rate help?',
      runs: 0,
    });
    expect((await api('POST', '/api/experiments', stack.reviewer, { name: 'head-lr' })).status).toBe(409);
    expect((await api('POST', '/api/experiments', stack.annotator, { name: 'other' })).status).toBe(403);
    expect((await api('POST', '/api/experiments', stack.reviewer, { name: 'has space' })).status).toBe(422);
  });

  it('attaches training jobs as runs (AttachIn), refusing unknown jobs, baselines and repeats', async () => {
    const first = await api('POST', '/api/experiments/head-lr/runs', stack.reviewer, {
      job_id: jobs[0]!.job_id,
      label: 'baseline',
    });
    expect(first.status).toBe(201);
    runIds.push(first.body.run_id as string);
    const second = await api('POST', '/api/experiments/head-lr/runs', stack.reviewer, {
      job_id: jobs[1]!.job_id,
      baseline_run_id: runIds[0],
      label: 'lr ×2',
      notes: 'same data, same epochs',
    });
    expect(second.status).toBe(201);
    expect(second.body).toMatchObject({ experiment: 'head-lr', baseline_run_id: runIds[0], label: 'lr ×2' });
    runIds.push(second.body.run_id as string);
    const again = await api('POST', '/api/experiments/head-lr/runs', stack.reviewer, {
      job_id: jobs[0]!.job_id,
    });
    expect(again.status).toBe(409);
    for (const job_id of [randomUUID(), 'not-a-job'])
      expect((await api('POST', '/api/experiments/head-lr/runs', stack.reviewer, { job_id })).status).toBe(
        404,
      );
    const badBaseline = await api('POST', '/api/experiments/head-lr/runs', stack.reviewer, {
      job_id: jobs[1]!.job_id,
      baseline_run_id: randomUUID(),
    });
    expect(badBaseline.status).toBe(404);
    const noExperiment = await api('POST', '/api/experiments/nope/runs', stack.reviewer, {
      job_id: jobs[0]!.job_id,
    });
    expect(noExperiment.status).toBe(404);
    expect(await db().auditLog.count({ where: { action: 'experiment.attach' } })).toBe(2);
  });

  it('lists experiments and shows one with its runs and their training', async () => {
    const list = await api('GET', '/api/experiments', stack.annotator);
    expect(list.status).toBe(200);
    expect(list.body.items).toEqual([expect.objectContaining({ name: 'head-lr', runs: 2 })]);
    const one = await api('GET', '/api/experiments/head-lr', stack.annotator);
    expect(one.status).toBe(200);
    const runs = one.body.runs as Array<{
      run_id: string;
      job: { status: string; model_version: string; curve: { epochs: number } };
    }>;
    expect(runs.map((r) => r.run_id)).toEqual(runIds);
    expect(runs.map((r) => [r.job.status, r.job.model_version, r.job.curve.epochs])).toEqual(
      jobs.map((j) => ['completed', j.model_version, EPOCHS]),
    );
    expect((await api('GET', '/api/experiments/missing', stack.annotator)).status).toBe(404);
  });

  it('compares runs side by side with deltas against the first', async () => {
    const res = await api(
      'GET',
      `/api/experiments/runs/compare?run_ids=${runIds.join(',')}`,
      stack.annotator,
    );
    expect(res.status).toBe(200);
    const body = res.body as {
      baseline_run_id: string;
      runs: Array<{
        run_id: string;
        job: {
          config: { learning_rate: number };
          metrics: { trained: { map50: number } };
          curve: { epochs: number };
        };
        per_class_ap: Record<string, number>;
        evaluations: Array<{ gold_id: string; map: number }>;
        deltas: null | {
          config: Record<string, number>;
          metrics: Record<string, number>;
          per_class_ap: Record<string, number>;
          curve: Record<string, number>;
          gold: Record<string, Record<string, number>>;
        };
      }>;
    };
    expect(body.baseline_run_id).toBe(runIds[0]);
    const [a, b] = body.runs;
    expect(a!.deltas).toBeNull();
    expect(b!.deltas!.config.learning_rate).toBeCloseTo(LEARNING_RATES[1]! - LEARNING_RATES[0]!, 12);
    expect(b!.deltas!.metrics['trained.map50']).toBeCloseTo(
      b!.job.metrics.trained.map50 - a!.job.metrics.trained.map50,
      12,
    );
    // Validation AP per class, from what the trainer measured on the val split.
    expect(Object.keys(a!.per_class_ap).sort()).toEqual(expect.arrayContaining(['bus', 'motorcycle']));
    expect(Object.keys(b!.deltas!.per_class_ap).sort()).toEqual(Object.keys(a!.per_class_ap).sort());
    expect(b!.deltas!.curve).toHaveProperty('last_train_loss');
    // Both models were evaluated on the same gold set: their gold figures compare too.
    expect(a!.evaluations.map((e) => e.gold_id)).toEqual([goldId]);
    expect(b!.deltas!.gold[goldId]!.map).toBeCloseTo(b!.evaluations[0]!.map - a!.evaluations[0]!.map, 12);
    const missing = await api(
      'GET',
      `/api/experiments/runs/compare?run_ids=${runIds[0]},${randomUUID()}`,
      stack.annotator,
    );
    expect(missing.status).toBe(404);
    const one = await api('GET', `/api/experiments/runs/compare?run_ids=${runIds[0]}`, stack.annotator);
    expect(one.status).toBe(422);
  });
});

describe('the registry as training sees it', () => {
  it('shows each trained model with the job that produced it and its gold evaluation', async () => {
    const res = await api('GET', '/api/training/registry', stack.annotator);
    expect(res.status).toBe(200);
    const items = res.body.items as Array<{
      model_version: string;
      state: string;
      lineage: { training_job_id: string | null; parent_version: string | null };
      training: null | {
        job_id: string;
        status: string;
        config: { learning_rate: number };
        curve: { epochs: number };
      };
      evaluations: Array<{ gold_id: string }>;
    }>;
    for (const [i, j] of jobs.entries()) {
      const m = items.find((x) => x.model_version === j.model_version)!;
      expect(m).toMatchObject({
        state: 'candidate',
        lineage: { training_job_id: j.job_id, parent_version: expect.stringMatching(/^yolox_nano\.onnx@/) },
        training: { job_id: j.job_id, status: 'completed', config: { learning_rate: LEARNING_RATES[i] } },
      });
      expect(m.training!.curve.epochs).toBe(EPOCHS);
      expect(m.evaluations.map((e) => e.gold_id)).toEqual([goldId]);
    }
    // A model no job produced has no training.
    expect(items.find((x) => x.model_version === NO_MOTO)!.training).toBeNull();
  });
});

describe('misses and recall on gold', () => {
  it('lists the gold objects a model misses, per class, with their frames', async () => {
    const res = await api(
      'GET',
      `/api/activelearn/false-negatives?model_version=${encodeURIComponent(NO_MOTO)}&gold_id=${goldId}`,
      stack.annotator,
    );
    expect(res.status).toBe(200);
    const body = res.body as {
      run_id: string;
      gold: number;
      missed: number;
      classes: Array<{
        class_name: string;
        gold: number;
        missed: number;
        recall: number;
        objects: Array<{ object_id: string; frame_id: string; session_id: string }>;
      }>;
    };
    expect(body).toMatchObject({ run_id: noMotoRun, gold: 6, missed: 3 });
    // Every motorcycle, no bus: the model cannot output the one and finds the other.
    expect(body.classes.map((c) => [c.class_name, c.gold, c.missed, c.recall])).toEqual([
      ['motorcycle', 3, 3, 0],
    ]);
    expect(body.classes[0]!.objects.map((o) => o.object_id).sort()).toEqual([...objects.motorcycle].sort());
    expect(body.classes[0]!.objects.every((o) => o.session_id === sessionId)).toBe(true);
    const limited = await api(
      'GET',
      `/api/activelearn/false-negatives?model_version=${encodeURIComponent(NO_MOTO)}&gold_id=${goldId}&limit=1`,
      stack.annotator,
    );
    expect(limited.body).toMatchObject({ listed: 1, truncated: true, missed: 3 });
    const never = await api(
      'GET',
      `/api/activelearn/false-negatives?model_version=never-ran@1&gold_id=${goldId}`,
      stack.annotator,
    );
    expect(never.status).toBe(404);
  });

  it('gives recall per class with a bootstrap interval, and says whether the sample can be trusted', async () => {
    const res = await api('POST', '/api/activelearn/recall-reliability', stack.annotator, {
      model_version: NO_MOTO,
      gold_id: goldId,
      n_boot: 500,
    });
    expect(res.status).toBe(200);
    const classes = res.body.classes as Array<{
      class_name: string;
      gold: number;
      tp: number;
      recall: number;
      lo: number;
      hi: number;
      enough_sample: boolean;
      reliable: boolean;
      reason: string;
    }>;
    // In ontology order (by class id).
    expect(classes.map((c) => [c.class_name, c.gold, c.tp, c.recall])).toEqual([
      ['motorcycle', 3, 0, 0],
      ['bus', 3, 3, 1],
    ]);
    // Three objects are far under the 25 the spec asks before a figure is trusted.
    for (const c of classes) {
      expect(c).toMatchObject({ enough_sample: false, reliable: false });
      expect(c.reason).toMatch(/3 gold objects, fewer than 25/);
      expect(c.lo).toBeLessThanOrEqual(c.recall);
      expect(c.hi).toBeGreaterThanOrEqual(c.recall);
    }
    const op = await db().evalOperation.findUniqueOrThrow({ where: { id: res.body.operation_id as string } });
    expect(op).toMatchObject({ opType: 'recall_reliability', subjectIds: [noMotoRun, goldId, NO_MOTO] });
    const again = await api('POST', '/api/activelearn/recall-reliability', stack.annotator, {
      model_version: NO_MOTO,
      gold_id: goldId,
      n_boot: 500,
      min_sample: 3,
    });
    // A recall that no resample moves, on enough objects, can be trusted.
    expect(again.body.classes).toEqual([
      expect.objectContaining({
        class_name: 'motorcycle',
        enough_sample: true,
        reliable: true,
        lo: 0,
        hi: 0,
      }),
      expect.objectContaining({ class_name: 'bus', enough_sample: true, reliable: true, lo: 1, hi: 1 }),
    ]);
    const reconstructed = await api('POST', '/api/inference-runs', stack.reviewer, {
      mode: 'reconstruct',
      session_id: sessionId,
      model_version: NO_MOTO,
    });
    const refused = await api('POST', '/api/activelearn/recall-reliability', stack.annotator, {
      model_version: NO_MOTO,
      gold_id: goldId,
      run_id: reconstructed.body.id,
    });
    expect(refused.status).toBe(422);
    expect(refused.body.reason).toBe('reconstructed');
  });
});

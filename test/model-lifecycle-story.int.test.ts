import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pino from 'pino';
import type { DatasetCommit } from '../generated/prisma/client';
import type { WorkerProcess } from '../runtime/worker-process';
import { createUserWithToken } from '../testkit/api';
import { agentTails, startEdgeAgents, stopEdgeAgents, type EdgeAgent } from '../testkit/edge-agents';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { openEventStream } from '../testkit/sse';
import { E_BIKE_SCENES, activitySpan, createTrainingCommit, sceneFrames } from '../testkit/training';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * Issue 15's "done when", on the real stack (PostgreSQL, MinIO, a private Temporal server with the
 * real workflows, a one-slot gpu worker, onnxruntime, edge agents as real processes). A fleet's
 * reviewers label its e-bikes `bicycle`; the shipped detector, the champion, calls them
 * motorcycles. An ML engineer trains a challenger on a dataset commit while an auto-label session
 * waits for the slot, watches its curve stream, sees an under-trained challenger refused by the
 * gate with the rule named, promotes the trained one (compared per slice on a sealed gold set of
 * held-out frames), compiles it for an edge target, and rolls it out to three running agents stage
 * by stage; a build over its latency budget is rolled back at its first stage.
 */
jest.setTimeout(600_000);

const TARGET = 'cpu-x86_64';
let stack: IngestStack;
let gpu: { process: WorkerProcess; running: Promise<void> } | undefined;
let commit: DatasetCommit;
let goldId: string;
let autolabelSession: string;
let dir: string;
const agents: EdgeAgent[] = [];

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, ...(body === undefined ? {} : { body }) });
const result = <T>(workflowId: string) =>
  stack.env.client.workflow.getHandle(workflowId).result() as Promise<T>;

interface GateOutcome {
  outcome: 'promoted' | 'refused';
  rule: string | null;
  reasons: Array<{ rule: string; reason: string }>;
  promotion_id: string;
}

async function train(config: Record<string, unknown>) {
  const res = await call('POST', '/api/training/start', stack.reviewer, {
    dataset_commit_id: commit.commitId,
    config,
  });
  expect(res.status).toBe(202);
  return res.body as { job_id: string; workflow_id: string };
}

async function gate(challenger: string): Promise<GateOutcome> {
  const res = await call('POST', '/api/govern/promote', stack.admin, {
    challenger_version: challenger,
    gold_id: goldId,
  });
  expect(res.status).toBe(202);
  return result<GateOutcome>((res.body as { workflow_id: string }).workflow_id);
}

beforeAll(async () => {
  stack = await startIngestStack({
    env: { APP_EDGE__GATE_CHECK_SECONDS: '1', APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: '20' },
  });
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
  commit = await createTrainingCommit(stack.api.deps, {
    name: 'fleet e-bikes',
    train: 0,
    val: 0,
    scenes: { train: E_BIKE_SCENES.train, val: E_BIKE_SCENES.heldOut, perScene: 3 },
    motorcycleLabel: 'bicycle',
    pothole: false,
  });

  // The gold set: held-out frames of the fleet, boxes drawn by a reviewer, sealed.
  const frames = await sceneFrames(E_BIKE_SCENES.heldOut, 3);
  const made = await createVehicleSession(stack.api.deps, frames, { name: 'gold drive' });
  for (const [i, f] of frames.entries())
    for (const [cls, box] of [
      ['bus', f.truth.bus],
      ['bicycle', f.truth.motorcycle],
    ] as const) {
      const res = await call('POST', `/api/frames/${made.frames[i]!.id}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: box,
      });
      expect(res.status).toBe(201);
    }
  const sealed = await call('POST', '/api/quality/gold/seal', stack.reviewer, {
    name: 'fleet gold',
    frame_ids: made.frames.map((f) => f.id),
  });
  expect(sealed.status).toBe(201);
  goldId = (sealed.body as { id: string }).id;

  autolabelSession = (await createVehicleSession(stack.api.deps, await vehicleFrames(4, { width: 640 })))
    .session.id;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-story-'));
}, 300_000);

afterAll(async () => {
  await stopEdgeAgents(agents);
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  await stack?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

interface Device {
  assigned_artifact_id: string | null;
  running_artifact_id: string | null;
}

/** Polls the fleet of the target until `done` holds (the agents register and report on their own time). */
async function fleetWhere(what: string, done: (devices: Device[]) => boolean): Promise<Device[]> {
  for (let i = 0; ; i++) {
    const { devices } = (await call('GET', `/api/edge/fleet?target=${TARGET}`, stack.annotator)).body as {
      devices: Device[];
    };
    if (devices.length === 3 && done(devices)) return devices;
    if (i > 240)
      throw new Error(`waited in vain for ${what}: ${JSON.stringify(devices)}\n${agentTails(agents)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let challenger: string;
let champion: string;

it('trains a challenger on the commit while auto-label waits for the slot, its curve streaming live', async () => {
  champion = (
    (await call('GET', '/api/govern/registry', stack.annotator)).body as {
      champion: { model_version: string };
    }
  ).champion.model_version;
  const job = await train({ epochs: 8, seed: 7 });
  const stream = await openEventStream(stack.api.url, `/api/events/training/${job.job_id}`, stack.annotator);
  const autolabel = await call('POST', '/api/autolabel/start', stack.reviewer, {
    session_id: autolabelSession,
  });
  expect(autolabel.status).toBe(202);

  const events = await stream.readUntil(
    (seen) =>
      seen.some(
        (e) => e.event === 'training.status' && (e.data as { status: string }).status === 'completed',
      ),
    300_000,
  );
  stream.close();
  const epochs = events
    .filter((e) => e.event === 'training.epoch')
    .map((e) => (e.data as { epoch: number }).epoch);
  expect(epochs).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);

  const outcome = await result<{ modelVersion: string }>(job.workflow_id);
  challenger = outcome.modelVersion;
  await result((autolabel.body as { workflow_id: string }).workflow_id);
  // The slot serialised them: the training activity and the auto-label session never overlapped.
  const [t0, t1] = await activitySpan(stack.env.client, job.workflow_id, 'trainModel');
  const [a0, a1] = await activitySpan(
    stack.env.client,
    (autolabel.body as { workflow_id: string }).workflow_id,
    'autolabelSession',
  );
  expect(t1 <= a0 || a1 <= t0).toBe(true);

  const model = await stack.api.deps.db.model.findUniqueOrThrow({ where: { modelVersion: challenger } });
  expect(model).toMatchObject({
    state: 'candidate',
    parentVersion: champion,
    datasetCommitId: commit.commitId,
    trainingJobId: job.job_id,
  });
  // On the commit's held-out split the challenger finds the bicycles its parent calls motorcycles.
  const metrics = model.metrics as Record<'parent' | 'trained', { ap50_by_class: Record<string, number> }>;
  const bicycle = (m: { ap50_by_class: Record<string, number> }) => m.ap50_by_class.bicycle ?? 0;
  expect(bicycle(metrics.trained) - bicycle(metrics.parent)).toBeGreaterThan(0.5);
});

it('refuses an under-trained challenger at the gate, naming the rule', async () => {
  const job = await train({ epochs: 1, learning_rate: 1e-6, seed: 7 });
  const weak = (await result<{ modelVersion: string }>(job.workflow_id)).modelVersion;
  const outcome = await gate(weak);
  expect(outcome.outcome).toBe('refused');
  // The weak copy still calls the e-bikes motorcycles: bicycle, a safety class, is under its floor.
  expect(outcome.rule).toBe('safety_floor');
  expect(outcome.reasons[0]!.reason).toMatch(/bicycle/);
  const models = await stack.api.deps.db.model.findMany({
    where: { modelVersion: { in: [weak, champion] } },
  });
  expect(Object.fromEntries(models.map((m) => [m.modelVersion, m.state]))).toEqual({
    [weak]: 'candidate',
    [champion]: 'champion',
  });
});

it('compares the trained challenger with the champion per slice and promotes it', async () => {
  const outcome = await gate(challenger);
  expect(outcome).toMatchObject({ outcome: 'promoted', rule: null });
  const row = await stack.api.deps.db.promotion.findUniqueOrThrow({ where: { id: outcome.promotion_id } });
  const report = row.report as {
    significance: { better: boolean; difference: number };
    slices: Array<{ name: string; frames: number }>;
  };
  expect(report.significance.better).toBe(true);
  expect(report.significance.difference).toBeGreaterThan(0);
  expect(report.slices.find((s) => s.name === 'all')).toMatchObject({ frames: 6 });
  const models = await call('GET', '/api/models', stack.annotator);
  const states = Object.fromEntries(
    (models.body as { items: Array<{ model_version: string; state: string }> }).items.map((m) => [
      m.model_version,
      m.state,
    ]),
  );
  expect(states[challenger]).toBe('champion');
  expect(states[champion]).toBe('retired');
});

let builds: Array<{ id: string; precision: string; sha256: string }>;

it('compiles the new champion for an edge target: an optimised fp32 build and an int8 build', async () => {
  const res = await call('POST', `/api/edgeforge/export/${encodeURIComponent(challenger)}`, stack.reviewer, {
    target: TARGET,
    gold_id: goldId,
    precisions: ['fp32', 'int8'],
    warmup: 1,
    runs: 3,
  });
  expect(res.status).toBe(202);
  await result((res.body as { workflow_id: string }).workflow_id);
  const read = await call('GET', res.headers.get('location')!, stack.annotator);
  const run = (read.body as { run: { status: string; result: { artifacts: typeof builds } } }).run;
  expect(run.status).toBe('completed');
  builds = run.result.artifacts;
  expect(builds.map((b) => b.precision).sort()).toEqual(['fp32', 'int8']);
});

it('rolls the fp32 build out to three running agents stage by stage, and rolls back a build over its latency budget', async () => {
  const agentUser = await createUserWithToken(stack.api.deps, 'annotator');
  agents.push(
    ...(await startEdgeAgents({
      apiUrl: stack.api.url,
      token: agentUser.token,
      target: TARGET,
      count: 3,
      dir,
    })),
  );
  const fp32 = builds.find((b) => b.precision === 'fp32')!;
  const int8 = builds.find((b) => b.precision === 'int8')!;
  await fleetWhere('all three agents registered', (devices) => devices.length === 3);

  const good = await call('POST', '/api/edgeforge/rollout', stack.reviewer, {
    artifact_id: fp32.id,
    stages: [33, 66, 100],
    stage_seconds: 4,
    gate: { max_p90_ms: 10_000, min_frames: 2 },
  });
  expect(good.status).toBe(202);
  const done = await result<{ status: string; stage: number }>(
    (good.body as { workflow_id: string }).workflow_id,
  );
  expect(done).toMatchObject({ status: 'completed', stage: 2 });
  const rollout = await stack.api.deps.db.edgeRollout.findUniqueOrThrow({
    where: { id: (good.body as { id: string }).id },
  });
  expect((rollout.history as Array<{ devices: string[] }>).map((s) => s.devices.length)).toEqual([1, 2, 3]);

  const breach = await call('POST', '/api/edgeforge/rollout', stack.reviewer, {
    artifact_id: int8.id,
    stages: [33, 66, 100],
    stage_seconds: 120,
    gate: { max_p90_ms: 0.001, min_frames: 2 },
  });
  expect(breach.status).toBe(202);
  const back = await result<{ status: string; rule: string; stage: number }>(
    (breach.body as { workflow_id: string }).workflow_id,
  );
  expect(back).toMatchObject({ status: 'rolled_back', rule: 'max_p90_ms', stage: 0 });
  // Every device is assigned the fp32 build again and reports running it, with its hash.
  const fleet = await fleetWhere('every device back on the fp32 build', (devices) =>
    devices.every((d) => d.running_artifact_id === fp32.id),
  );
  expect(fleet.every((d) => d.assigned_artifact_id === fp32.id)).toBe(true);
  const reports = await stack.api.deps.db.edgeTelemetry.findMany({
    where: { artifactId: fp32.id, status: 'ok' },
  });
  expect(reports.every((t) => t.modelSha256 === fp32.sha256)).toBe(true);
  expect(new Set(reports.map((t) => t.deviceId)).size).toBe(3);
});

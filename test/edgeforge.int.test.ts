import path from 'node:path';
import * as ort from 'onnxruntime-node';
import { readObject } from '../activities/inspector/frame-objects';
import { currentChampion, sha256Hex } from '../activities/models/artifacts';
import { dominates } from '../core/edgeforge';
import type { Model } from '../generated/prisma/client';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';

/**
 * The edge forge on the real stack (docs/edgeforge.md): the shipped YOLOX detector compiled for the
 * x86-64 CPU target into a graph-optimised fp32 build and an int8 build, both checked for mAP@0.5
 * against the source on a sealed gold set of real photographs and timed here with onnxruntime;
 * reported claims audited against those timings; the gate, the accuracy/latency grid, a sustained
 * run and the deployments view.
 */
const history = (kind: string) => path.join(__dirname, `histories/edgeforge-${kind}.json`);
/** The workflow each kind of forge run ran under, for the replay tests. */
const workflows: Record<string, string> = {};
let stack: IngestStack;
let champion: Model;
let goldId: string;
let frameIds: string[];

interface Artifact {
  id: string;
  precision: string;
  optimization: string;
  uri: string;
  sha256: string;
  size_bytes: number;
  accuracy: { gold_id: string; map50_source: number; map50: number; loss: number; quantize: object | null };
}
interface Bench {
  id: string;
  source: string;
  artifact_id: string | null;
  latency_ms: { p50: number; p90: number; p99: number; mean: number; min: number; max: number };
  throughput_fps: number;
  memory_mb: number | null;
  environment: Record<string, unknown>;
}
interface RunOut {
  id: string;
  kind: string;
  status: string;
  error: string | null;
  params: Record<string, unknown>;
  result: Record<string, unknown>;
}

const api = (method: string, url: string, token: string, body?: unknown) =>
  stack.api.call(method, url, { token, ...(body === undefined ? {} : { body }) });

/** Starts a forge job, waits for its workflow and reads its Location: the run and its benchmarks. */
async function runForge(url: string, body: unknown): Promise<{ run: RunOut; items: Bench[] }> {
  const res = await api('POST', url, stack.reviewer, body);
  expect(res.status).toBe(202);
  const { workflow_id: workflowId, run } = res.body as { workflow_id: string; run: { kind: string } };
  await stack.env.client.workflow.getHandle(workflowId).result();
  workflows[run.kind] = workflowId;
  const location = res.headers.get('location')!;
  const read = await api('GET', location, stack.annotator);
  expect(read.status).toBe(200);
  return read.body as { run: RunOut; items: Bench[] };
}

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  champion = await currentChampion({ db, storage, config: stack.config });
  const frames = await vehicleFrames(4, { width: 640 });
  const made = await createVehicleSession(stack.api.deps, frames);
  frameIds = made.frames.map((f) => f.id);
  for (const [i, f] of frames.slice(0, 3).entries())
    for (const cls of ['bus', 'motorcycle'] as const) {
      const res = await api('POST', `/api/frames/${frameIds[i]}/objects`, stack.reviewer, {
        class_name: cls,
        bbox: f.truth[cls],
      });
      expect(res.status).toBe(201);
    }
  const sealed = await api('POST', '/api/quality/gold/seal', stack.reviewer, {
    name: 'edge gold',
    frame_ids: frameIds.slice(0, 3),
  });
  expect(sealed.status).toBe(201);
  goldId = (sealed.body as { id: string }).id;
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe('capabilities and refusals', () => {
  it('lists the targets with what this installation can do for each, and why not', async () => {
    const res = await api('GET', '/api/edgeforge/capabilities', stack.annotator);
    expect(res.status).toBe(200);
    const { targets, host } = res.body as {
      host: { arch: string; providers: string[] };
      targets: Array<{
        id: string;
        precisions: string[];
        compile: { available: boolean; reason: string | null };
      }>;
    };
    const byId = new Map(targets.map((t) => [t.id, t]));
    expect(host.providers).toContain('cpu');
    expect(byId.get('cpu-x86_64')).toMatchObject({
      precisions: ['fp32', 'fp16', 'int8'],
      compile: { available: true },
    });
    expect(byId.get('jetson-tensorrt')!.compile).toMatchObject({ available: false });
    expect(byId.get('jetson-tensorrt')!.compile.reason).toContain('trtexec');
    expect(byId.get('cuda')!.compile.reason).toContain('cuda execution provider');
  });

  it('refuses a target whose toolchain is absent by name, and bad requests, leaving no run', async () => {
    const url = `/api/edgeforge/export/${encodeURIComponent(champion.modelVersion)}`;
    const tensorrt = await api('POST', url, stack.reviewer, { target: 'jetson-tensorrt', gold_id: goldId });
    expect(tensorrt.status).toBe(422);
    expect((tensorrt.body as { detail: string }).detail).toMatch(
      /cannot compile for jetson-tensorrt: .*trtexec/,
    );
    expect((await api('POST', url, stack.reviewer, { target: 'abacus' })).status).toBe(422);
    expect((await api('POST', url, stack.reviewer, { target: 'cuda', precisions: ['int8'] })).status).toBe(
      422,
    );
    expect((await api('POST', url, stack.annotator, { gold_id: goldId })).status).toBe(403);
    expect((await api('POST', '/api/edgeforge/export/no-such-model', stack.reviewer, {})).status).toBe(404);
    expect(await stack.api.deps.db.edgeForgeRun.count()).toBe(0);
  });
});

describe('compile, measure, audit, gate', () => {
  let fp32: Artifact;
  let int8: Artifact;
  let exportRun: RunOut;
  let exportBenches: Bench[];

  beforeAll(async () => {
    const done = await runForge(`/api/edgeforge/export/${encodeURIComponent(champion.modelVersion)}`, {
      target: 'cpu-x86_64',
      gold_id: goldId,
      precisions: ['fp32', 'int8'],
      warmup: 1,
      runs: 5,
    });
    exportRun = done.run;
    exportBenches = done.items;
    const artifacts = exportRun.result.artifacts as Artifact[];
    fp32 = artifacts.find((a) => a.precision === 'fp32')!;
    int8 = artifacts.find((a) => a.precision === 'int8')!;
  }, 300_000);

  it('builds a graph-optimised fp32 file and a smaller int8 file that both load and run in onnxruntime', async () => {
    expect(exportRun).toMatchObject({ kind: 'export', status: 'completed', error: null });
    expect(fp32.optimization).toBe('extended');
    const { storage } = stack.api.deps;
    const input = new ort.Tensor('float32', new Float32Array(3 * 416 * 416).fill(114), [1, 3, 416, 416]);
    for (const a of [fp32, int8]) {
      const key = a.uri.replace(`s3://${storage.bucket('models')}/`, '');
      const bytes = await readObject(storage, { bucket: storage.bucket('models'), key });
      expect(sha256Hex(bytes)).toBe(a.sha256);
      expect(bytes.length).toBe(a.size_bytes);
      const session = await ort.InferenceSession.create(bytes);
      const out = await session.run({ [session.inputNames[0]!]: input });
      expect(out[session.outputNames[0]!]!.dims).toEqual([1, 3549, 85]);
      await session.release();
    }
    expect(fp32.sha256).not.toBe(champion.sha256);
    expect(int8.size_bytes).toBeLessThan(fp32.size_bytes / 2);
  });

  it('measures both builds on the gold set: the fp32 build loses nothing, the int8 build little', () => {
    const source = exportRun.result.source as { map50: number };
    // The source finds the bus and the motorcycle on the real photographs.
    expect(source.map50).toBeGreaterThan(0.5);
    for (const a of [fp32, int8]) {
      expect(a.accuracy).toMatchObject({ gold_id: goldId, map50_source: source.map50 });
      expect(a.accuracy.loss).toBeCloseTo(source.map50 - a.accuracy.map50, 10);
    }
    expect(Math.abs(fp32.accuracy.loss)).toBeLessThan(1e-9);
    expect(Math.abs(int8.accuracy.loss)).toBeLessThanOrEqual(0.05);
    expect(int8.accuracy).toMatchObject({ quantize: { scheme: 'per-channel', opset: 13, tensors: 113 } });
  });

  it('times each build on a real frame: positive, ordered figures and the environment', () => {
    expect(exportBenches).toHaveLength(2);
    expect(new Set(exportBenches.map((b) => b.artifact_id))).toEqual(new Set([fp32.id, int8.id]));
    for (const b of exportBenches) {
      const l = b.latency_ms;
      expect(b.source).toBe('measured');
      expect(l.min).toBeGreaterThan(0);
      expect(l.min).toBeLessThanOrEqual(l.p50);
      expect(l.p50).toBeLessThanOrEqual(l.p90);
      expect(l.p90).toBeLessThanOrEqual(l.p99);
      expect(l.p99).toBeLessThanOrEqual(l.max);
      expect(b.throughput_fps).toBeCloseTo(1000 / l.mean, 6);
      expect(b.environment).toMatchObject({
        runs: 5,
        warmup: 1,
        frame_id: frameIds[0],
        onnxruntime: ort.env.versions.common,
        run_id: exportRun.id,
      });
      expect(typeof b.environment.cpu).toBe('string');
      expect(b.environment.threads).toBeGreaterThan(0);
    }
  });

  it('measures an artifact again on demand, and stores a device’s figures as reported', async () => {
    const measured = await runForge('/api/edgeforge/benchmark?measure=true', {
      model_version: champion.modelVersion,
      target: 'cpu-x86_64',
      latency_ms: {},
      artifact_id: int8.id,
      warmup: 1,
      runs: 3,
    });
    expect(measured.run).toMatchObject({ kind: 'measure', status: 'completed' });
    expect(measured.items).toHaveLength(1);
    expect(measured.items[0]).toMatchObject({ source: 'measured', artifact_id: int8.id });
    const empty = await api('POST', '/api/edgeforge/benchmark', stack.reviewer, {
      model_version: champion.modelVersion,
      target: 'cpu-x86_64',
      latency_ms: {},
    });
    expect(empty.status).toBe(422);
    const wrong = await api('POST', '/api/edgeforge/benchmark?measure=true', stack.reviewer, {
      model_version: champion.modelVersion,
      target: 'cpu-arm64',
      latency_ms: {},
      artifact_id: int8.id,
    });
    expect(wrong.status).toBe(422);
  });

  it('flags a reported claim ten times faster than measured, and leaves unchecked claims unverified', async () => {
    const fastest = Math.min(
      ...(
        (
          await api(
            'GET',
            `/api/edgeforge/benchmarks?artifact_id=${int8.id}&source=measured`,
            stack.annotator,
          )
        ).body as { items: Bench[] }
      ).items.map((b) => b.latency_ms.p50),
    );
    const report = (target: string, p50: number, extra: object = {}) =>
      api('POST', '/api/edgeforge/benchmark', stack.reviewer, {
        model_version: champion.modelVersion,
        target,
        latency_ms: { p50 },
        ...extra,
      });
    const fake = await report('cpu-x86_64', fastest / 10, { artifact_id: int8.id, power_w: 4 });
    expect(fake.status).toBe(201);
    expect(fake.body).toMatchObject({ source: 'reported', artifact_id: int8.id, power_w: 4 });
    const fair = await report('cpu-x86_64', fastest * 1.2, { artifact_uri: int8.uri });
    expect(fair.body).toMatchObject({ artifact_id: int8.id });
    const elsewhere = await report('cpu-arm64', 5);
    expect(elsewhere.status).toBe(201);

    const audit = await api('GET', '/api/edgeforge/benchmarks/audit', stack.annotator);
    expect(audit.status).toBe(200);
    const body = audit.body as {
      tolerance: number;
      items: Array<{
        benchmark: { id: string };
        verdict: string;
        speedup_claimed: number | null;
        stat: string;
      }>;
    };
    const verdict = (id: string) => body.items.find((i) => i.benchmark.id === id)!;
    expect(verdict((fake.body as { id: string }).id)).toMatchObject({
      verdict: 'not_reproduced',
      stat: 'p50',
    });
    expect(verdict((fake.body as { id: string }).id).speedup_claimed).toBeCloseTo(10, 6);
    expect(verdict((fair.body as { id: string }).id).verdict).toBe('reproduced');
    expect(verdict((elsewhere.body as { id: string }).id).verdict).toBe('unverified');
    expect(body.tolerance).toBe(0.25);
    const strict = await api(
      'GET',
      '/api/edgeforge/benchmarks/audit?tolerance=0.95&target=cpu-x86_64',
      stack.annotator,
    );
    expect((strict.body as { claims: number; not_reproduced: number }).claims).toBe(2);
  });

  it('passes the gate on generous budgets and fails a budget a figure exceeds, with the figures', async () => {
    const pass = await api('POST', '/api/edgeforge/gate', stack.reviewer, {
      artifact_id: int8.id,
      budgets: { latency_ms: 60_000, memory_mb: 100_000, accuracy_loss: 0.05 },
    });
    expect(pass.status).toBe(200);
    const passed = pass.body as {
      passed: boolean;
      benchmark_id: string;
      checks: Array<{ budget: string; value: number | null; passed: boolean }>;
    };
    const memory = passed.checks.find((c) => c.budget === 'memory')!;
    // Memory is what the process grew by: a collection meanwhile leaves it unmeasured, which fails closed.
    expect(passed.passed).toBe(memory.value !== null);
    const bench = (
      await stack.api.deps.db.edgeBenchmark.findUniqueOrThrow({ where: { id: passed.benchmark_id } })
    ).latencyMs as { p90: number };
    expect(passed.checks.find((c) => c.budget === 'latency')).toMatchObject({
      value: bench.p90,
      passed: true,
    });
    expect(passed.checks.find((c) => c.budget === 'size')!.value).toBeCloseTo(
      int8.size_bytes / 1024 / 1024,
      9,
    );
    const fail = await api('POST', '/api/edgeforge/gate', stack.reviewer, {
      artifact_id: int8.id,
      budgets: { latency_ms: 0.001, latency_stat: 'p50', size_mb: 0.5 },
    });
    const failed = fail.body as {
      passed: boolean;
      checks: Array<{ budget: string; passed: boolean; reason: string }>;
    };
    expect(failed.passed).toBe(false);
    expect(failed.checks.find((c) => c.budget === 'latency')).toMatchObject({ passed: false });
    expect(failed.checks.find((c) => c.budget === 'size')!.reason).toContain('> 0.5 MB');
    expect(failed.checks.find((c) => c.budget === 'accuracy')!.passed).toBe(true);
    expect(await stack.api.deps.db.edgeForgeRun.count({ where: { kind: 'gate' } })).toBe(2);
  });

  it('shows what runs where from device assignments and rollouts', async () => {
    const { db } = stack.api.deps;
    await db.edgeDevice.create({
      data: {
        name: 'car-1',
        target: 'cpu-x86_64',
        assignedArtifactId: int8.id,
        runningArtifactId: int8.id,
        runningSha256: int8.sha256,
        status: 'online',
      },
    });
    await db.edgeDevice.create({
      data: {
        name: 'car-2',
        target: 'cpu-x86_64',
        runningArtifactId: '00000000-0000-4000-8000-000000000000',
        status: 'online',
      },
    });
    await db.edgeRollout.create({
      data: {
        artifactId: int8.id,
        target: 'cpu-x86_64',
        stages: [50, 100],
        gate: {},
        status: 'completed',
        stage: 1,
        workflowId: 'rollout-x',
      },
    });
    const res = await api('GET', '/api/edgeforge/deployments', stack.annotator);
    expect(res.status).toBe(200);
    const body = res.body as {
      items: Array<{
        artifact: { id: string };
        assigned: Array<{ name: string }>;
        running: Array<{ name: string; sha256_matches: boolean }>;
        rollouts: Array<{ status: string }>;
      }>;
      unknown_artifacts: Array<{ name: string }>;
    };
    expect(body.items).toHaveLength(1);
    expect(body.items[0]).toMatchObject({
      artifact: { id: int8.id },
      assigned: [{ name: 'car-1' }],
      running: [{ name: 'car-1', sha256_matches: true }],
      rollouts: [{ status: 'completed' }],
    });
    expect(body.unknown_artifacts.map((d) => d.name)).toEqual(['car-2']);
  });

  it('measures the accuracy/latency trade-off over a prune grid and returns its Pareto front', async () => {
    const { run } = await runForge('/api/edgeforge/cooptimize', {
      target: 'cpu-x86_64',
      base_latency_ms: 50,
      base_map50: 0.9,
      prune_grid: [0, 0.6],
      precisions: ['fp32', 'int8'],
      gold_id: goldId,
      warmup: 1,
      runs: 3,
    });
    expect(run).toMatchObject({ kind: 'cooptimize', status: 'completed' });
    const points = run.result.points as Array<{
      prune: number;
      precision: string;
      latency_ms: number;
      map50: number;
      zeroed: number;
      vs_stated_base: { latency_ms: number };
    }>;
    expect(points.map((p) => [p.prune, p.precision])).toEqual([
      [0, 'fp32'],
      [0, 'int8'],
      [0.6, 'fp32'],
      [0.6, 'int8'],
    ]);
    for (const p of points) {
      expect(p.latency_ms).toBeGreaterThan(0);
      expect(p.map50).toBeGreaterThanOrEqual(0);
      expect(p.map50).toBeLessThanOrEqual(1);
      expect(p.vs_stated_base.latency_ms).toBeCloseTo(p.latency_ms - 50, 9);
      expect(p.zeroed > 0).toBe(p.prune > 0);
    }
    const front = run.result.front as typeof points;
    expect(front.length).toBeGreaterThan(0);
    for (const f of front) expect(points.some((p) => dominates(p, f))).toBe(false);
    for (const p of points.filter(
      (q) => !front.some((f) => f.prune === q.prune && f.precision === q.precision),
    ))
      expect(front.some((f) => dominates(f, p))).toBe(true);
    // Zeroing most weights costs accuracy the evaluator sees; the int8 build keeps the fp32 build's.
    expect(points[2]!.map50).toBeLessThan(points[0]!.map50 - 0.5);
    expect(points[1]!.map50).toBeCloseTo(int8.accuracy.map50, 12);
    // The same unpruned fp32 build the export checked scores the same on the same gold set.
    expect(points[0]!.map50).toBeCloseTo(
      (run.result.base as { measured: { map50: number } }).measured.map50,
      12,
    );
    expect(points[0]!.map50).toBeCloseTo(fp32.accuracy.map50, 12);
  }, 300_000);

  it('runs an artifact for a sustained duration and reports latency per window and the temperature', async () => {
    const { run } = await runForge('/api/edgeforge/thermal', {
      artifact_id: fp32.id,
      duration_s: 2,
      windows: 2,
    });
    expect(run).toMatchObject({ kind: 'thermal', status: 'completed' });
    const windows = run.result.windows as Array<{ window: number; runs: number; p50: number }>;
    expect(windows.map((w) => w.window)).toEqual([0, 1]);
    for (const w of windows) expect(w.runs).toBeGreaterThan(0);
    expect(run.result.drift).toMatchObject({ first_p50_ms: windows[0]!.p50, last_p50_ms: windows[1]!.p50 });
    const temperature = run.result.temperature as { start_c: number | null; reason: string | null };
    if (temperature.start_c === null) expect(temperature.reason).toContain('/sys/class/thermal');
    else expect(temperature.reason).toBeNull();
    const tooLong = await api('POST', '/api/edgeforge/thermal', stack.reviewer, {
      artifact_id: fp32.id,
      duration_s: 600,
    });
    expect(tooLong.status).toBe(422);
  }, 120_000);
});

describe('edge-forge workflow', () => {
  const steps: Record<string, string[]> = {
    export: [
      'startForgeRun',
      'forgeSourceAccuracy',
      'forgeBuildVariant',
      'forgeBuildVariant',
      'forgeMeasure',
      'forgeMeasure',
      'finishForgeRun',
    ],
    measure: ['startForgeRun', 'forgeMeasure', 'finishForgeRun'],
    cooptimize: ['startForgeRun', ...Array<string>(4).fill('forgeCooptPoint'), 'finishForgeRun'],
    thermal: ['startForgeRun', 'forgeThermal', 'finishForgeRun'],
  };

  it.each(Object.keys(steps))(
    'replays the recorded history of a %s run',
    async (kind) => {
      const handle = stack.env.client.workflow.getHandle(workflows[kind]!);
      await recordHistoryIfAsked(history(kind), () => handle.fetchHistory());
      expect(scheduledActivities(await handle.fetchHistory())).toEqual(steps[kind]);
      await expect(
        replayRecordedHistory(history(kind), require.resolve('../workflows'), 'recorded'),
      ).resolves.toBeUndefined();
    },
    60_000,
  );
});

import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { TestWorkflowEnvironment } from '@temporalio/testing';
import type { Worker } from '@temporalio/worker';
import { createDetectActivities } from '../activities/detect';
import type { AppConfig } from '../core/config';
import { createCpuWorker } from '../workers-cpu/worker';
import { GpuSlotTakenError, acquireGpuSlotLock, createGpuWorker } from '../workers-gpu/worker';
import { REPO_ROOT, localStackEnv, testConfig } from '../testkit/stack';
import { recordHistoryIfAsked, replayRecordedHistory, startTemporalTestEnv } from '../testkit/temporal';
import type { SlotOccupancy } from './fixtures/workflows/slot-probe';

const TEST_WORKFLOWS = require.resolve('./fixtures/workflows');
const HISTORY = path.join(__dirname, 'histories/inference-check.json');

let env: TestWorkflowEnvironment;
let config: AppConfig;
let workers: Worker[];
let running: Promise<void>[];

const occupySlot = async (label: string, ms: number): Promise<SlotOccupancy> => {
  const start = Date.now();
  await new Promise((r) => setTimeout(r, ms));
  return { label, start, end: Date.now() };
};

beforeAll(async () => {
  env = await startTemporalTestEnv();
  config = testConfig();
  const missingModelConfig = testConfig({
    APP_MODELS__CLOSED_SET_DETECTOR: 'no-such-model.onnx',
    APP_TEMPORAL__GPU_TASK_QUEUE: 'gpu-without-model',
  });
  workers = [
    await createCpuWorker({
      connection: env.nativeConnection,
      config,
      activities: { occupySlot },
      workflowsPath: TEST_WORKFLOWS,
    }),
    await createGpuWorker({
      connection: env.nativeConnection,
      config,
      activities: { occupySlot, ...createDetectActivities({ config }) },
    }),
    await createGpuWorker({
      connection: env.nativeConnection,
      config: missingModelConfig,
      activities: createDetectActivities({ config: missingModelConfig }),
    }),
  ];
  running = workers.map((w) => w.run());
});

afterAll(async () => {
  for (const w of workers ?? []) if (w.getState() === 'RUNNING') w.shutdown();
  await Promise.allSettled(running ?? []);
  await env?.teardown();
});

const overlaps = (runs: SlotOccupancy[]) => {
  const sorted = [...runs].sort((a, b) => a.start - b.start);
  return sorted.slice(1).filter((r, i) => r.start < sorted[i]!.end).length;
};

const probe = (taskQueue: string) =>
  env.client.workflow.execute('slotProbeWorkflow', {
    taskQueue: 'cpu',
    workflowId: `slot-probe-${taskQueue}-${Date.now()}`,
    args: [taskQueue, 3, 400],
  });

describe('the gpu task queue', () => {
  it('never runs two activities at once, even when they are queued together', async () => {
    const runs = (await probe('gpu')) as SlotOccupancy[];
    expect(runs).toHaveLength(3);
    expect(overlaps(runs)).toBe(0);
  });

  it('(control) the cpu queue does run them together, so the check above can fail', async () => {
    const runs = (await probe('cpu')) as SlotOccupancy[];
    expect(overlaps(runs)).toBeGreaterThan(0);
  });

  it('admits one workers-gpu process per GPU through a PostgreSQL lock', async () => {
    const url = localStackEnv().DATABASE_URL!;
    const first = await acquireGpuSlotLock(url, 42);
    await expect(acquireGpuSlotLock(url, 42)).rejects.toBeInstanceOf(GpuSlotTakenError);
    const otherGpu = await acquireGpuSlotLock(url, 43);
    await otherGpu.end();
    await first.end();
    const again = await acquireGpuSlotLock(url, 42);
    await again.end();
  });
});

describe('inferenceCheckWorkflow', () => {
  it('loads and runs the real models on the GPU worker, reporting their tensors', async () => {
    const workflowId = `inference-check-${Date.now()}`;
    const handle = await env.client.workflow.start('inferenceCheckWorkflow', {
      taskQueue: 'cpu',
      workflowId,
      args: [{ models: ['closedSetDetector', 'faceDetector'], gpuTaskQueue: config.temporal.gpuTaskQueue }],
    });
    const [yolox, yunet] = await handle.result();
    expect(yolox.inputs).toEqual([{ name: 'images', type: 'float32', shape: [1, 3, 416, 416] }]);
    expect(yolox.outputs).toEqual([{ name: 'output', type: 'float32', shape: [1, 3549, 85] }]);
    expect(yolox.sha256).toBe('e8af074932d4ed7e232278e3055cefcdea3edf178874a3694ae292649fb464dd');
    expect(yolox.providers).toContain('cpu');
    expect(yunet.sha256).toBe('ebafce4e3c118d6554634be5c27ab333b4c047a9a8c3faf1d7cf93101c22f0f0');
    expect(yunet.outputs).toHaveLength(12);

    // Recorded on RECORD_HISTORIES=1; the replay test below guards determinism.
    await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
  });

  it('replays its recorded history against the current workflow code', async () => {
    const recorded = JSON.parse(fs.readFileSync(HISTORY, 'utf8'));
    expect(recorded.events.length).toBeGreaterThan(5);
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('refuses by name, without retrying, when a model file is missing', async () => {
    const run = env.client.workflow.execute('inferenceCheckWorkflow', {
      taskQueue: 'cpu',
      workflowId: `inference-check-missing-${Date.now()}`,
      args: [{ models: ['closedSetDetector'], gpuTaskQueue: 'gpu-without-model' }],
    });
    const err = await run.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(WorkflowFailedError);
    const cause = (err as WorkflowFailedError).cause?.cause as {
      type?: string;
      message: string;
      nonRetryable?: boolean;
    };
    expect(cause.type).toBe('ModelUnavailable');
    expect(cause.message).toMatch(/closedSetDetector.*no-such-model\.onnx/);
  });
});

describe('worker processes', () => {
  const tsx = path.join(REPO_ROOT, 'node_modules/tsx/dist/cli.mjs');
  const startWorker = (entry: string, extraEnv: Record<string, string> = {}) => {
    const proc = spawn(process.execPath, [tsx, path.join(REPO_ROOT, entry)], {
      env: {
        ...process.env,
        ...localStackEnv(),
        APP_ENV: 'test',
        APP_LOG__LEVEL: 'info',
        APP_WORKERS__GPU_DEVICE: '7',
        ...extraEnv,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    proc.stdout.on('data', (d) => (output += d));
    proc.stderr.on('data', (d) => (output += d));
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    const waitFor = async (pattern: RegExp) => {
      for (let i = 0; i < 240 && !pattern.test(output); i++) await new Promise((r) => setTimeout(r, 250));
      if (!pattern.test(output)) throw new Error(`${entry} never printed ${pattern}:\n${output}`);
    };
    return { proc, exited, waitFor, output: () => output };
  };

  it('start, register on their queues, and drain on SIGTERM; a second workers-gpu for the same GPU refuses', async () => {
    const cpu = startWorker('workers-cpu/main.ts');
    const gpu = startWorker('workers-gpu/main.ts');
    await cpu.waitFor(/workers-cpu polling/);
    await gpu.waitFor(/workers-gpu polling with one slot/);

    const second = startWorker('workers-gpu/main.ts');
    expect(await second.exited).toBe(1);
    expect(second.output()).toMatch(/already serves GPU 7/);

    cpu.proc.kill('SIGTERM');
    gpu.proc.kill('SIGTERM');
    expect(await cpu.exited).toBe(0);
    expect(await gpu.exited).toBe(0);
    expect(cpu.output()).toMatch(/workers-cpu stopped/);
    expect(gpu.output()).toMatch(/workers-gpu stopped/);
  });
});

import { spawn } from 'node:child_process';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Worker } from '@temporalio/worker';
import { createGpuActivities } from '../activities';
import { createGpuWorker } from '../workers-gpu/worker';
import { startIngestStack, type IngestStack } from './fixtures/media/harness';
import { createVehicleSession, vehicleFrames } from './fixtures/media/vehicles';
import { REPO_ROOT, localStackEnv } from './helpers/stack';

/**
 * A gpu worker process dies (SIGKILL) in the middle of a session. Temporal notices the missing
 * heartbeats and hands the session to another worker, which resumes after the last committed
 * frame: every frame is labelled exactly once, and no object is duplicated.
 */
const FRAMES = 30;
let stack: IngestStack;
let rescue: { worker: Worker; running: Promise<void> } | undefined;

beforeAll(async () => {
  stack = await startIngestStack({ env: { APP_AUTOLABEL__HEARTBEAT_TIMEOUT_SECONDS: '3' } });
});

afterAll(async () => {
  if (rescue?.worker.getState() === 'RUNNING') rescue.worker.shutdown();
  await rescue?.running.catch(() => undefined);
  await stack?.close();
});

function startWorkerProcess() {
  // tsx's loader in this very process (not its CLI, which forks a child that SIGKILL would orphan).
  const tsx = path.join(REPO_ROOT, 'node_modules/tsx/dist');
  const proc = spawn(
    process.execPath,
    [
      '--require',
      path.join(tsx, 'preflight.cjs'),
      '--import',
      pathToFileURL(path.join(tsx, 'loader.mjs')).href,
      path.join(REPO_ROOT, 'workers-gpu/main.ts'),
    ],
    {
      env: {
        ...process.env,
        ...localStackEnv(),
        APP_ENV: 'test',
        APP_LOG__LEVEL: 'info',
        DATABASE_URL: stack.db.url,
        APP_DATABASE__URL: stack.db.url,
        APP_TEMPORAL__ADDRESS: stack.env.address,
        APP_WORKERS__GPU_DEVICE: '31',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  proc.stdout.on('data', (d) => (output += d));
  proc.stderr.on('data', (d) => (output += d));
  const exited = new Promise<NodeJS.Signals | number | null>((r) =>
    proc.once('exit', (code, signal) => r(signal ?? code)),
  );
  return { proc, exited, output: () => output };
}

it('resumes a session from the heartbeat after its worker is killed, without duplicate objects', async () => {
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createVehicleSession(
    { db, storage },
    await vehicleFrames(FRAMES, { width: 480, step: 0.01 }),
  );

  const doomed = startWorkerProcess();
  for (let i = 0; i < 240 && !/workers-gpu polling/.test(doomed.output()); i++)
    await new Promise((r) => setTimeout(r, 250));
  expect(doomed.output()).toMatch(/workers-gpu polling with one slot/);

  const res = await stack.api.call('POST', '/api/autolabel/start', {
    token: stack.reviewer,
    body: { session_id: session.id },
  });
  expect(res.status).toBe(202);
  const jobId = res.body.job_id as string;

  let doneAtKill = 0;
  for (let i = 0; i < 600 && doneAtKill < 3; i++) {
    doneAtKill = (await db.autolabelJob.findUniqueOrThrow({ where: { id: jobId } })).framesDone;
    if (doneAtKill < 3) await new Promise((r) => setTimeout(r, 20));
  }
  doomed.proc.kill('SIGKILL');
  expect(await doomed.exited).toBe('SIGKILL');
  const atKill = await db.autolabelJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(atKill.framesDone).toBeGreaterThanOrEqual(3);
  expect(atKill.framesDone).toBeLessThan(FRAMES);
  // The dead worker's slot row stays until the retry takes it over.
  expect((await db.gpuSlot.findMany()).map((s) => s.holderId)).toEqual([jobId]);

  const { config } = stack;
  const w = await createGpuWorker({
    connection: stack.env.nativeConnection,
    config,
    activities: createGpuActivities({ config, db, storage }),
  });
  rescue = { worker: w, running: w.run() };
  await stack.env.client.workflow.getHandle(res.body.workflow_id).result();

  const job = await db.autolabelJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(job).toMatchObject({
    state: 'completed',
    attempts: 2,
    framesDone: FRAMES,
    lastFrameIndex: FRAMES - 1,
  });
  expect(job.resumedFrom).toBe(atKill.lastFrameIndex);

  // Each frame was labelled once: one audit entry per frame, and per frame the object numbers 0..n-1 once each.
  const audits = await db.auditLog.findMany({
    where: { action: 'autolabel.frame', detail: { path: ['job_id'], equals: jobId } },
  });
  expect(audits).toHaveLength(FRAMES);
  expect(new Set(audits.map((a) => a.subjectId))).toEqual(new Set(frames.map((f) => f.id)));
  const objects = await db.annoObject.findMany({
    where: { frame: { sessionId: session.id } },
    select: { frameId: true, idemKey: true },
  });
  expect(objects).toHaveLength(job.objectsCreated);
  for (const f of frames) {
    const ns = objects
      .filter((o) => o.frameId === f.id)
      .map((o) => Number(o.idemKey!.split(':').pop()))
      .sort((a, b) => a - b);
    expect(ns.length).toBeGreaterThan(0);
    expect(ns).toEqual([...ns.keys()]);
  }
  expect(await db.provenance.count({ where: { object: { frame: { sessionId: session.id } } } })).toBe(
    objects.length,
  );
  expect(await db.gpuSlot.count()).toBe(0);
});

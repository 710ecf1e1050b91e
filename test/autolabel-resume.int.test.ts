import pg from 'pg';
import pino from 'pino';
import type { WorkerProcess } from '../runtime/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { spawnWorkerProcess } from '../testkit/worker-process';

/**
 * A gpu worker process dies (SIGKILL) in the middle of a session. Temporal notices the missing
 * heartbeats and hands the session to another worker, which resumes after the last committed
 * frame: every frame is labelled exactly once, and no object is duplicated.
 */
const FRAMES = 30;
/** From this frame on the test locks the frames' rows, stopping the first worker inside the session. */
const BLOCKED_FRAME = 12;
let stack: IngestStack;
let rescue: { process: WorkerProcess; running: Promise<void> } | undefined;

beforeAll(async () => {
  stack = await startIngestStack({ env: { APP_AUTOLABEL__HEARTBEAT_TIMEOUT_SECONDS: '3' } });
});

afterAll(async () => {
  if (rescue?.process.worker.getState() === 'RUNNING') rescue.process.worker.shutdown();
  await rescue?.running.catch(() => undefined);
  await stack?.close();
});

function startWorkerProcess() {
  return spawnWorkerProcess('workers-gpu/main.ts', {
    DATABASE_URL: stack.db.url,
    APP_DATABASE__URL: stack.db.url,
    APP_TEMPORAL__ADDRESS: stack.env.address,
    APP_WORKERS__GPU_DEVICE: '31',
  });
}

it('resumes a session from the heartbeat after its worker is killed, without duplicate objects', async () => {
  const { db, storage } = stack.api.deps;
  const { session, frames } = await createVehicleSession(
    { db, storage },
    await vehicleFrames(FRAMES, { width: 480, step: 0.01 }),
  );

  // The kill must land mid-session on any machine, however fast. The test holds the rows of the
  // frames from BLOCKED_FRAME on FOR UPDATE: inserting the objects of a batch with one of those
  // frames waits on the lock (their foreign key takes KEY SHARE on it). Batches commit in order and
  // hold fewer than BLOCKED_FRAME frames, so the worker stops with at least one batch committed and
  // the session unfinished, and is killed while it waits.
  const blocker = new pg.Client({ connectionString: stack.db.url });
  let res: Awaited<ReturnType<typeof stack.api.call>>;
  await blocker.connect();
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM frames WHERE session_id = $1 AND index >= $2 FOR UPDATE', [
      session.id,
      BLOCKED_FRAME,
    ]);

    const doomed = startWorkerProcess();
    for (let i = 0; i < 240 && !/workers-gpu polling/.test(doomed.output()); i++)
      await new Promise((r) => setTimeout(r, 250));
    expect(doomed.output()).toMatch(/workers-gpu polling with one slot/);

    res = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: session.id },
    });
    expect(res.status).toBe(202);

    // Watched from outside the blocker's transaction: pg_stat_activity is a snapshot per transaction.
    let waiting = 0;
    for (let i = 0; i < 1200 && waiting === 0; i++) {
      const [row] = await db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      waiting = row!.n;
      if (!waiting) await new Promise((r) => setTimeout(r, 50));
    }
    const job = waiting ? null : await db.autolabelJob.findFirst({ where: { sessionId: session.id } });
    expect({ waiting, job, log: waiting ? '' : doomed.output().slice(-2000) }).toEqual({
      waiting: 1,
      job: null,
      log: '',
    });
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }
  const jobId = res.body.job_id as string;
  const atKill = await db.autolabelJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(atKill.framesDone).toBeGreaterThan(0);
  expect(atKill.framesDone).toBeLessThan(FRAMES);
  expect(atKill.framesDone).toBe(atKill.lastFrameIndex! + 1);
  // The dead worker's slot row stays until the retry takes it over.
  expect((await db.gpuSlot.findMany()).map((s) => s.holderId)).toEqual([jobId]);

  const rescuer = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  rescue = { process: rescuer, running: rescuer.run() };
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

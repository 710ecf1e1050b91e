import path from 'node:path';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import pg from 'pg';
import pino from 'pino';
import type { DatasetCommit } from '../generated/prisma/client';
import type { WorkerProcess } from '../runtime/worker-process';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { openEventStream } from '../testkit/sse';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';
import { createTrainingCommit } from '../testkit/training';
import { spawnWorkerProcess } from '../testkit/worker-process';
import { startGpuWorkerProcess } from '../workers-gpu/process';

/**
 * A training job whose gpu worker dies (SIGKILL) resumes on another worker from the checkpoint of
 * its last stored epoch, and a cancelled job stops, frees the slot and ends cancelled. Both stop the
 * worker at a known point the same way: the test holds an uncommitted curve point for epoch 2, so
 * the worker, having stored epoch 1, waits on that row's lock inside epoch 2's bookkeeping.
 */
const HISTORY = path.join(__dirname, 'histories/training-resume.json');
const HEARTBEAT_SECONDS = '3';

let stack: IngestStack;
let commit: DatasetCommit;
let gpu: { process: WorkerProcess; running: Promise<void> } | undefined;

beforeAll(async () => {
  stack = await startIngestStack({ env: { APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: HEARTBEAT_SECONDS } });
  commit = await createTrainingCommit(stack.api.deps, { train: 4, val: 2 });
});

async function stopGpu() {
  if (gpu?.process.worker.getState() === 'RUNNING') gpu.process.worker.shutdown();
  await gpu?.running.catch(() => undefined);
  gpu = undefined;
}

afterAll(async () => {
  await stopGpu();
  await stack?.close();
});

async function startJob(epochs: number) {
  const res = await stack.api.call('POST', '/api/training/start', {
    token: stack.reviewer,
    body: { dataset_commit_id: commit.commitId, config: { epochs } },
  });
  if (res.status !== 202) throw new Error(`start: ${res.status} ${JSON.stringify(res.body)}`);
  return { jobId: res.body.job_id as string, workflowId: res.body.workflow_id as string };
}

/** Holds epoch 2's curve point uncommitted; the job's worker, once it gets there, waits on it. */
async function blockEpoch2(jobId: string): Promise<pg.Client> {
  const blocker = new pg.Client({ connectionString: stack.db.url });
  await blocker.connect();
  await blocker.query('BEGIN');
  await blocker.query(
    'INSERT INTO training_curve_points (id, job_id, epoch, train_loss) VALUES (gen_random_uuid(), $1, 2, 0)',
    [jobId],
  );
  return blocker;
}

/** Waits until a session waits on a lock (watched from outside the blocker's transaction). */
async function untilWaitingOnLock(): Promise<number> {
  for (let i = 0; i < 2400; i++) {
    const [row] = await stack.api.deps.db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n) return row!.n;
    await new Promise((r) => setTimeout(r, 50));
  }
  return 0;
}

async function startGpu() {
  const process = await startGpuWorkerProcess(stack.config, pino({ level: 'silent' }));
  gpu = { process, running: process.run() };
}

const curveEpochs = async (jobId: string) =>
  (
    await stack.api.deps.db.trainingCurvePoint.findMany({
      where: { jobId },
      orderBy: { epoch: 'asc' },
      select: { epoch: true },
    })
  ).map((p) => p.epoch);

it('resumes from the last checkpoint after its gpu worker is killed: every epoch once, none lost', async () => {
  const { db } = stack.api.deps;
  // Queued before any gpu worker runs, so the block is in place before epoch 1 starts.
  const { jobId, workflowId } = await startJob(4);
  const blocker = await blockEpoch2(jobId);
  try {
    const doomed = spawnWorkerProcess('workers-gpu/main.ts', {
      DATABASE_URL: stack.db.url,
      APP_DATABASE__URL: stack.db.url,
      APP_TEMPORAL__ADDRESS: stack.env.address,
      APP_TRAINING__HEARTBEAT_TIMEOUT_SECONDS: HEARTBEAT_SECONDS,
      APP_WORKERS__GPU_DEVICE: '31',
    });
    const waiting = await untilWaitingOnLock();
    expect({ waiting, log: waiting ? '' : doomed.output().slice(-2000) }).toEqual({ waiting: 1, log: '' });
    const atKill = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(atKill).toMatchObject({
      status: 'running',
      checkpoint: { epoch: 1, key: `training/${jobId}/checkpoint.json` },
    });
    expect(await curveEpochs(jobId)).toEqual([1]);
    expect((await db.gpuSlot.findMany()).map((s) => [s.holderKind, s.holderId, s.device])).toEqual([
      ['training', jobId, 31],
    ]);
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }

  await startGpu();
  const outcome = await stack.env.client.workflow.getHandle(workflowId).result();
  expect(outcome).toEqual({ jobId, status: 'completed', modelVersion: `trained-${jobId}`, resumedFrom: 1 });
  const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(job).toMatchObject({ status: 'completed', progress: { epoch: 4, resumed_from: 1, attempt: 2 } });
  expect(await curveEpochs(jobId)).toEqual([1, 2, 3, 4]);
  expect(await db.model.count({ where: { trainingJobId: jobId } })).toBe(1);
  expect(await db.gpuSlot.count()).toBe(0);

  // The history shows the second attempt, started after the first's heartbeat timed out.
  const handle = stack.env.client.workflow.getHandle(workflowId);
  const started = ((await handle.fetchHistory()).events ?? []).find(
    (e) => e.activityTaskStartedEventAttributes && e.activityTaskStartedEventAttributes.attempt === 2,
  );
  expect(started?.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo).toBeTruthy();
  await recordHistoryIfAsked(HISTORY, () => handle.fetchHistory());
  await expect(
    replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
  ).resolves.toBeUndefined();
});

it('cancels a running job: the trainer hears it through its heartbeat, stops, frees the slot, and the job ends cancelled', async () => {
  await stopGpu();
  const { db } = stack.api.deps;
  const { jobId, workflowId } = await startJob(30);
  const blocker = await blockEpoch2(jobId);
  let heard!: () => void;
  const cancelHeard = new Promise<void>((r) => (heard = r));
  try {
    const stream = await openEventStream(stack.api.url, `/api/events/training/${jobId}`, stack.annotator);
    const reading = stream.readUntil((events) => {
      if (events.some((e) => e.event === 'training.cancelling')) heard();
      return false;
    }, 300_000);
    await startGpu();
    expect(await untilWaitingOnLock()).toBe(1);
    const slot = await stack.api.call('GET', '/api/gpu/slot', { token: stack.annotator });
    expect(slot.body.holder).toMatchObject({
      kind: 'training',
      holder_id: jobId,
      stale: false,
      job: { status: 'running' },
    });

    const cancel = await stack.api.call('POST', `/api/training/${jobId}/cancel`, { token: stack.reviewer });
    expect(cancel.status).toBe(202);
    expect(cancel.headers.get('location')).toBe(`/api/training/${jobId}`);
    expect(cancel.body).toMatchObject({ job_id: jobId, cancel_requested: true });
    await cancelHeard;
    await blocker.query('ROLLBACK');

    const failure = await stack.env.client.workflow
      .getHandle(workflowId)
      .result()
      .catch((err: unknown) => err);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect((failure as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    const events = await reading;
    expect(events.at(-1)).toMatchObject({
      event: 'training.status',
      data: { status: 'cancelled', job_id: jobId },
    });
  } finally {
    await blocker.end();
  }
  const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(job).toMatchObject({ status: 'cancelled', error: 'cancelled', modelVersion: null });
  expect(job.finishedAt).not.toBeNull();
  // It stopped at once: the epoch it was in when the cancel arrived is its last.
  expect(await curveEpochs(jobId)).toEqual([1, 2]);
  expect(await db.gpuSlot.count()).toBe(0);
  const free = await stack.api.call('GET', '/api/gpu/slot', { token: stack.annotator });
  expect(free.body).toMatchObject({ busy: false, holder: null });
  const history = (await stack.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  expect(history.some((e) => e.activityTaskCancelRequestedEventAttributes)).toBe(true);
  expect(history.some((e) => e.activityTaskCanceledEventAttributes)).toBe(true);
  const again = await stack.api.call('POST', `/api/training/${jobId}/cancel`, { token: stack.reviewer });
  expect(again.status).toBe(409);
});

import fs from 'node:fs';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { CancelledFailure, WorkflowFailedError } from '@temporalio/client';
import pg from 'pg';
import { createExportableSession, startSessionExport } from '../testkit/exports';
import { objectKeys, startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';
import { makeDriveVideo } from '../testkit/media/video';
import { recordHistoryIfAsked, replayRecordedHistory, scheduledActivities } from '../testkit/temporal';
import { createTrainingCommit } from '../testkit/training';

/**
 * The jobs group on the real stack (PostgreSQL, MinIO, a private Temporal server, the cpu worker
 * with the real workflows; no gpu worker, so gpu work waits for the slot): jobs of several kinds in
 * one list, and cancels that end each job cancelled with what it had done left consistent.
 */
const HISTORY = path.join(__dirname, 'histories/job-cancel.json');

let stack: IngestStack;
let db: IngestStack['api']['deps']['db'];
let reviewerId: string;
let adminId: string;

beforeAll(async () => {
  // The worker starts inside the first test, once that test holds its lock.
  stack = await startIngestStack({ worker: false });
  db = stack.api.deps.db;
  const idOf = async (token: string) =>
    (await stack.api.call('GET', '/api/users/me', { token })).body.id as string;
  [reviewerId, adminId] = await Promise.all([idOf(stack.reviewer), idOf(stack.admin)]);
});

afterAll(async () => {
  await stack?.close();
});

const call = (method: string, url: string, token: string | undefined) =>
  stack.api.call(method, url, token === undefined ? {} : { token });

/** Cancels through the route and waits for JobCancelWorkflow's outcome. */
async function cancel(kind: string, jobId: string, token = stack.reviewer) {
  const res = await call('POST', `/api/jobs/${kind}/${jobId}/cancel`, token);
  expect(res.status).toBe(202);
  const outcome = await stack.env.client.workflow.getHandle(res.body.cancel_workflow_id as string).result();
  return { res, outcome };
}

/** Waits until some session of this database waits on a row lock. */
async function untilWaitingOnLock(): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    const [row] = await db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM pg_stat_activity
       WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no session came to wait on the lock');
}

/** Waits until the job's workflow has asked its running activity to cancel. */
async function untilCancelRequested(workflowId: string): Promise<void> {
  const handle = stack.env.client.workflow.getHandle(workflowId);
  for (let i = 0; i < 2400; i++) {
    const events = (await handle.fetchHistory()).events ?? [];
    if (events.some((e) => e.activityTaskCancelRequestedEventAttributes)) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${workflowId} never asked its activity to cancel`);
}

async function cancelledEvents(jobId: string) {
  return db.platformEvent.findMany({ where: { kind: 'job.cancelled', subjectId: jobId } });
}

describe('route security', () => {
  const someId = randomUUID();

  it('answers 401 without a token on both routes', async () => {
    expect((await call('GET', '/api/jobs', undefined)).status).toBe(401);
    expect((await call('POST', `/api/jobs/ingest/${someId}/cancel`, undefined)).status).toBe(401);
  });

  it('answers 403 below the role of the kind: cancel needs reviewer (admin for corpus runs), export and corpus lists reviewer', async () => {
    expect((await call('POST', `/api/jobs/ingest/${someId}/cancel`, stack.annotator)).status).toBe(403);
    expect((await call('POST', `/api/jobs/corpus/${someId}/cancel`, stack.reviewer)).status).toBe(403);
    expect((await call('GET', '/api/jobs?kind=export', stack.annotator)).status).toBe(403);
    expect((await call('GET', '/api/jobs?kind=corpus', stack.annotator)).status).toBe(403);
    expect((await call('GET', '/api/jobs?kind=corpus', stack.reviewer)).status).toBe(200);
  });

  it('answers 404 for an unknown job and 422 for an unknown kind, a malformed id or cursor', async () => {
    expect((await call('POST', `/api/jobs/ingest/${someId}/cancel`, stack.admin)).status).toBe(404);
    expect((await call('POST', `/api/jobs/campaign/${someId}/cancel`, stack.admin)).status).toBe(404);
    expect((await call('POST', `/api/jobs/flywheel/${someId}/cancel`, stack.admin)).status).toBe(404);
    expect((await call('POST', `/api/jobs/teleport/${someId}/cancel`, stack.admin)).status).toBe(422);
    expect((await call('POST', '/api/jobs/ingest/nope/cancel', stack.admin)).status).toBe(422);
    expect((await call('GET', '/api/jobs?cursor=ingest.nope', stack.admin)).status).toBe(422);
    expect((await call('GET', '/api/jobs?state=paused', stack.admin)).status).toBe(422);
  });
});

describe('cancelling', () => {
  let ingestJobId: string;

  it('cancels a running ingest: its running step ends, its cleanup runs, then it reads cancelled with nothing left behind', async () => {
    const video = makeDriveVideo(stack.dir);
    const started = await stack.api.call('POST', '/api/ingest', {
      token: stack.admin,
      body: { path: video, kind: 'video' },
    });
    expect(started.status).toBe(202);
    ingestJobId = started.body.job_id as string;
    const { session_id: sessionId, workflow_id: workflowId } = started.body as {
      session_id: string;
      workflow_id: string;
    };

    // The job row is held, so the ingest's first step waits on it, running, when the cancel comes.
    const blocker = new pg.Client({ connectionString: stack.db.url });
    await blocker.connect();
    try {
      await blocker.query('BEGIN');
      await blocker.query('SELECT 1 FROM ingest_jobs WHERE id = $1 FOR UPDATE', [ingestJobId]);
      await stack.startWorker();
      await untilWaitingOnLock();

      const res = await call('POST', `/api/jobs/ingest/${ingestJobId}/cancel`, stack.reviewer);
      expect(res.status).toBe(202);
      expect(res.headers.get('location')).toBe(`/api/imports/${ingestJobId}`);
      expect(res.body).toMatchObject({
        kind: 'ingest',
        job_id: ingestJobId,
        workflow_id: workflowId,
        cancel_requested: true,
        cancel_workflow_id: `job-cancel-ingest-${ingestJobId}`,
      });
      await untilCancelRequested(workflowId);
      // A second cancel while the first is under way.
      expect((await call('POST', `/api/jobs/ingest/${ingestJobId}/cancel`, stack.reviewer)).status).toBe(409);
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }

    const outcome = await stack.env.client.workflow.getHandle(`job-cancel-ingest-${ingestJobId}`).result();
    expect(outcome).toEqual({
      kind: 'ingest',
      job_id: ingestJobId,
      state: 'cancelled',
      raw_state: 'cancelled',
      cancelled: true,
      workflow_closed_as: 'CANCELLED',
    });
    const ended = await stack.env.client.workflow
      .getHandle(workflowId)
      .result()
      .catch((err: unknown) => err);
    expect(ended).toBeInstanceOf(WorkflowFailedError);
    expect((ended as WorkflowFailedError).cause).toBeInstanceOf(CancelledFailure);
    // The probe ran to its end; no step after it started; the failure report cleaned up.
    const history = await stack.env.client.workflow.getHandle(workflowId).fetchHistory();
    expect(scheduledActivities(history)).toEqual(['probeDrive', 'failIngest']);

    const job = await db.ingestJob.findUniqueOrThrow({ where: { id: ingestJobId } });
    expect(job).toMatchObject({ state: 'cancelled', error: 'cancelled', framesExtracted: 0 });
    expect(job.finishedAt).not.toBeNull();
    expect(await db.frame.count({ where: { sessionId } })).toBe(0);
    expect(await db.ingestCandidate.count({ where: { sessionId } })).toBe(0);
    expect(await objectKeys(stack, 'frames', `${sessionId}/`)).toEqual([]);
    expect(await db.session.findUniqueOrThrow({ where: { id: sessionId } })).toMatchObject({
      state: 'failed',
      frameCount: 0,
    });

    const events = await cancelledEvents(ingestJobId);
    expect(
      events.map((e) => ({ subjectType: e.subjectType, actorId: e.actorId, payload: e.payload })),
    ).toEqual([
      {
        subjectType: 'job',
        actorId: reviewerId,
        payload: { job_kind: 'ingest', job_id: ingestJobId, started_by: adminId, by: reviewerId },
      },
    ]);
    const audit = await db.auditLog.findMany({ where: { subjectType: 'job', subjectId: ingestJobId } });
    expect(audit.map((a) => [a.action, a.actorId])).toEqual([
      ['job.cancel_requested', reviewerId],
      ['job.cancelled', reviewerId],
    ]);
    const listed = await call('GET', '/api/jobs?kind=ingest&state=cancelled', stack.annotator);
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        kind: 'ingest',
        job_id: ingestJobId,
        state: 'cancelled',
        raw_state: 'cancelled',
        workflow_id: workflowId,
        link: `/api/imports/${ingestJobId}`,
      }),
    ]);
    // Finished now: a cancel is a conflict.
    const again = await call('POST', `/api/jobs/ingest/${ingestJobId}/cancel`, stack.reviewer);
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/has already finished \(cancelled\)/);

    const cancelWorkflow = stack.env.client.workflow.getHandle(`job-cancel-ingest-${ingestJobId}`);
    await recordHistoryIfAsked(HISTORY, () => cancelWorkflow.fetchHistory());
    await expect(
      replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
    ).resolves.toBeUndefined();
  });

  it('cancels an export inside its page-writing step: the step ends, no commit is made, and it reads cancelled with the pages it wrote', async () => {
    const { sessionId } = await createExportableSession(stack.api.deps, 2);
    // The advisory privacy gate reads pii_audits page by page while the pages are written, and
    // nothing before that step does: with the table locked, the export waits inside it.
    const blocker = new pg.Client({ connectionString: stack.db.url });
    await blocker.connect();
    let started: { job_id: string; workflow_id: string };
    try {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE pii_audits IN ACCESS EXCLUSIVE MODE');
      started = await startSessionExport(stack.api, stack.reviewer, sessionId, 'cancelled-export');
      await untilWaitingOnLock();
      const res = await call('POST', `/api/jobs/export/${started.job_id}/cancel`, stack.reviewer);
      expect(res.status).toBe(202);
      expect(res.headers.get('location')).toBe(`/api/exports/${started.job_id}/progress`);
      expect(res.body).toMatchObject({ kind: 'export', job_id: started.job_id, raw_state: 'running' });
      await untilCancelRequested(started.workflow_id);
      await blocker.query('ROLLBACK');
    } finally {
      await blocker.end();
    }
    const jobId = started.job_id;

    const outcome = await stack.env.client.workflow.getHandle(`job-cancel-export-${jobId}`).result();
    expect(outcome).toEqual({
      kind: 'export',
      job_id: jobId,
      state: 'cancelled',
      raw_state: 'cancelled',
      cancelled: true,
      workflow_closed_as: 'CANCELLED',
    });
    // The writing step ran to its end (it does not listen for the cancel); the commit never started.
    const history = await stack.env.client.workflow.getHandle(started.workflow_id).fetchHistory();
    expect(scheduledActivities(history)).toEqual(['beginExport', 'writeExportPages', 'failExport']);
    const job = await db.exportJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({
      state: 'cancelled',
      error: 'cancelled',
      commitId: null,
      progress: expect.objectContaining({ total_frames: 2, frames_done: 2 }),
    });
    expect(job.finishedAt).not.toBeNull();
    expect(await db.datasetCommit.count({ where: { jobId } })).toBe(0);
    // The failure report's job.failed comes first (a known limit, docs/jobs.md), then one job.cancelled.
    const ends = await db.platformEvent.findMany({ where: { subjectId: jobId }, orderBy: { seq: 'asc' } });
    expect(ends.map((e) => e.kind)).toEqual(['job.failed', 'job.cancelled']);
    expect(ends[1]!.payload).toEqual({
      job_kind: 'export',
      job_id: jobId,
      started_by: reviewerId,
      by: reviewerId,
    });
    const listed = await call('GET', '/api/jobs?kind=export&state=cancelled', stack.reviewer);
    expect(listed.body.items).toEqual([
      expect.objectContaining({
        kind: 'export',
        job_id: jobId,
        state: 'cancelled',
        raw_state: 'cancelled',
        // Every frame written, but never completed: the figure it reached, kept below 1.
        progress: 0.99,
        workflow_id: started.workflow_id,
        link: `/api/exports/${jobId}/progress`,
      }),
    ]);
  });

  it('cancels an auto-label waiting for the GPU slot: nothing was labelled, and the slot was never taken', async () => {
    const sessionId = (await createVehicleSession(stack.api.deps, await vehicleFrames(2, { width: 640 })))
      .session.id;
    const started = await stack.api.call('POST', '/api/autolabel/start', {
      token: stack.reviewer,
      body: { session_id: sessionId },
    });
    expect(started.status).toBe(202);
    const jobId = started.body.job_id as string;
    const { outcome } = await cancel('autolabel', jobId);
    expect(outcome).toMatchObject({ state: 'cancelled', cancelled: true, workflow_closed_as: 'CANCELLED' });
    const job = await db.autolabelJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({ state: 'cancelled', framesDone: 0, objectsCreated: 0 });
    expect(await db.annoObject.count({ where: { frame: { sessionId } } })).toBe(0);
    expect(await db.gpuSlot.count()).toBe(0);
    expect((await cancelledEvents(jobId)).map((e) => e.payload)).toEqual([
      { job_kind: 'autolabel', job_id: jobId, started_by: reviewerId, by: reviewerId },
    ]);
  });

  it('cancels a training job waiting for the slot: its own workflow marks it cancelled, and job.cancelled is emitted once', async () => {
    const commit = await createTrainingCommit(stack.api.deps, { train: 2, val: 1, width: 320 });
    const started = await stack.api.call('POST', '/api/training/start', {
      token: stack.reviewer,
      body: { dataset_commit_id: commit.commitId, config: { epochs: 1 } },
    });
    expect(started.status).toBe(202);
    const jobId = started.body.job_id as string;
    const { outcome } = await cancel('training', jobId);
    expect(outcome).toMatchObject({ state: 'cancelled', raw_state: 'cancelled', cancelled: true });
    const job = await db.trainingJob.findUniqueOrThrow({ where: { id: jobId } });
    expect(job).toMatchObject({ status: 'cancelled', error: 'cancelled', modelVersion: null });
    expect(await db.model.count({ where: { trainingJobId: jobId } })).toBe(0);
    // Its own workflow ended it and emitted the event first; the cancel's was the same event, not a second.
    const events = await cancelledEvents(jobId);
    expect(events.map((e) => e.payload)).toEqual([
      { job_kind: 'training', job_id: jobId, started_by: reviewerId, by: null },
    ]);
  });

  it('ends a corpus run whose workflow is gone at once, for an admin only', async () => {
    const run = await db.agentRun.create({
      data: { kind: 'redetect-all', status: 'running', workflowId: `redetect-all-${randomUUID()}` },
    });
    expect((await call('POST', `/api/jobs/corpus/${run.id}/cancel`, stack.reviewer)).status).toBe(403);
    const { outcome } = await cancel('corpus', run.id, stack.admin);
    expect(outcome).toMatchObject({ state: 'cancelled', cancelled: true, workflow_closed_as: 'NOT_FOUND' });
    expect(await db.agentRun.findUniqueOrThrow({ where: { id: run.id } })).toMatchObject({
      status: 'cancelled',
      error: 'cancelled',
    });
  });

  it('refuses to cancel a run while its revert is under way', async () => {
    const run = await db.agentRun.create({
      data: { kind: 'redetect-all', status: 'reverting', workflowId: 'redetect-all' },
    });
    const res = await call('POST', `/api/jobs/corpus/${run.id}/cancel`, stack.admin);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/revert is under way/);
  });
});

describe('the list', () => {
  let completedIngest: string;
  let completedExport: string;

  beforeAll(async () => {
    const folder = path.join(stack.dir, 'frames');
    fs.mkdirSync(folder);
    for (const [i, f] of (await vehicleFrames(2, { width: 640 })).entries())
      fs.writeFileSync(path.join(folder, `${String(i).padStart(5, '0')}.jpg`), f.jpeg);
    const res = await stack.api.call('POST', '/api/ingest', {
      token: stack.admin,
      body: { path: folder, kind: 'frames' },
    });
    expect(res.status).toBe(202);
    await stack.env.client.workflow.getHandle(res.body.workflow_id as string).result();
    completedIngest = res.body.job_id as string;
    const { sessionId } = await createExportableSession(stack.api.deps, 1);
    const exported = await startSessionExport(stack.api, stack.reviewer, sessionId, 'listed-export');
    await stack.env.client.workflow.getHandle(exported.workflow_id).result();
    completedExport = exported.job_id;
  });

  it('shows jobs of several kinds with their states, newest first', async () => {
    const all = await call('GET', '/api/jobs?limit=200', stack.admin);
    expect(all.status).toBe(200);
    const items = all.body.items as Array<{
      kind: string;
      state: string;
      created_at: string;
      job_id: string;
    }>;
    expect(new Set(items.map((i) => i.kind))).toEqual(
      new Set(['ingest', 'autolabel', 'export', 'training', 'corpus']),
    );
    const times = items.map((i) => i.created_at);
    expect([...times].sort().reverse()).toEqual(times);
    expect(items.find((i) => i.job_id === completedIngest)).toMatchObject({
      kind: 'ingest',
      state: 'completed',
      raw_state: 'completed',
      progress: 1,
    });
    expect(items.find((i) => i.job_id === completedExport)).toMatchObject({
      kind: 'export',
      state: 'completed',
      raw_state: 'succeeded',
      progress: 1,
      link: `/api/exports/${completedExport}/progress`,
    });
    expect(items.find((i) => i.kind === 'corpus' && i.state === 'running')).toMatchObject({
      raw_state: 'reverting',
    });
    expect(
      items
        .filter((i) => i.state === 'cancelled')
        .map((i) => i.kind)
        .sort(),
    ).toEqual(['autolabel', 'corpus', 'export', 'ingest', 'training']);
    const done = await call('GET', '/api/jobs?state=completed', stack.admin);
    expect(done.body.items.map((i: { job_id: string }) => i.job_id)).toEqual([
      completedExport,
      completedIngest,
    ]);

    // An annotator does not see the kinds whose own routes need a reviewer.
    const forReviewers = ['corpus', 'export'];
    const asAnnotator = await call('GET', '/api/jobs?limit=200', stack.annotator);
    expect(asAnnotator.body.items.map((i: { kind: string }) => i.kind)).toEqual(
      items.filter((i) => !forReviewers.includes(i.kind)).map((i) => i.kind),
    );
  });

  it('pages through the tables with a cursor: every job once, in the same order', async () => {
    const all = (await call('GET', '/api/jobs?limit=200', stack.admin)).body.items as Array<{
      job_id: string;
    }>;
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: { items: Array<{ job_id: string }>; next_cursor: string | null } } =
        await call(
          'GET',
          `/api/jobs?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          stack.admin,
        );
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((i) => i.job_id));
      cursor = page.body.next_cursor;
    } while (cursor);
    expect(seen).toEqual(all.map((i) => i.job_id));
  });

  it('answers 409 to a cancel of a completed job, naming its own state', async () => {
    const res = await call('POST', `/api/jobs/ingest/${completedIngest}/cancel`, stack.reviewer);
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/has already finished \(completed\)/);
    const exported = await call('POST', `/api/jobs/export/${completedExport}/cancel`, stack.reviewer);
    expect(exported.status).toBe(409);
    expect(exported.body.detail).toMatch(/has already finished \(succeeded\)/);
  });
});

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import pg from 'pg';
import type { ExportCursor } from '../activities/export';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { readExport } from '../testkit/readers';
import { createSessionFixture } from '../testkit/session-fixtures';
import { spawnWorkerProcess } from '../testkit/worker-process';

/**
 * A cpu worker process dies (SIGKILL) in the middle of an export. Temporal notices the missing
 * heartbeats and hands the page-writing activity to another worker, which continues after the
 * last page the job recorded: the commit holds every object exactly once. Then an export whose
 * workflow gave up is listed as resumable and resumed through the API.
 */
const FRAMES = 40;
let stack: IngestStack;
let tmp: string;
let sessionId: string;

beforeAll(async () => {
  // No in-process worker at first: the doomed child process must take the export.
  stack = await startIngestStack({ worker: false, env: { APP_EXPORT__HEARTBEAT_TIMEOUT_SECONDS: '3' } });
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'drivelab-export-resume-'));
  const { db, storage } = stack.api.deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const { session, frames } = await createSessionFixture({ db, storage }, { frames: FRAMES, redacted: true });
  sessionId = session.id;
  for (const f of frames) {
    await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
    await db.annoObject.create({
      data: { frameId: f.id, classId: car.id, bbox: [1, 1, 20, 20], source: 'human', state: 'accepted' },
    });
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function cocoOf(commitId: string) {
  const { db, storage } = stack.api.deps;
  const commit = await db.datasetCommit.findUniqueOrThrow({ where: { commitId } });
  const file = path.join(tmp, `${commitId}.json`);
  const stream = (await storage.client.getObject(
    storage.bucket('exports'),
    `${commit.prefix}annotations/instances_train.json`,
  )) as Readable;
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  fs.writeFileSync(file, Buffer.concat(chunks));
  return { summary: await readExport('coco', file), json: JSON.parse(fs.readFileSync(file, 'utf8')) };
}

it('resumes after the last recorded page when its worker is killed, without duplicating objects', async () => {
  const { db } = stack.api.deps;
  const doomed = spawnWorkerProcess('workers-cpu/main.ts', {
    DATABASE_URL: stack.db.url,
    APP_DATABASE__URL: stack.db.url,
    APP_TEMPORAL__ADDRESS: stack.env.address,
    // One frame per page, so the kill lands between pages.
    APP_EXPORT__PAGE_FRAMES: '1',
  });
  for (let i = 0; i < 240 && !/workers-cpu polling/.test(doomed.output()); i++)
    await new Promise((r) => setTimeout(r, 250));
  expect(doomed.output()).toMatch(/workers-cpu polling/);

  const res = await stack.api.call('POST', '/api/export', {
    token: stack.reviewer,
    body: {
      name: 'resumed',
      formats: ['coco', 'parquet'],
      predicate: { session_ids: [sessionId] },
      split: { train: 1, val: 0, test: 0 },
    },
  });
  expect(res.status).toBe(202);
  const jobId = res.body.job_id as string;

  // Once a few pages are recorded, hold the job row: the worker's next cursor update waits on it,
  // and it is killed while it waits, with a page written but not recorded.
  const blocker = new pg.Client({ connectionString: stack.db.url });
  await blocker.connect();
  let atKill: ExportCursor | undefined;
  try {
    for (let i = 0; i < 3000; i++) {
      const job = await db.exportJob.findUniqueOrThrow({ where: { id: jobId } });
      if (((job.cursor as unknown as ExportCursor | null)?.page ?? 0) >= 2) break;
      await new Promise((r) => setTimeout(r, 5));
    }
    await blocker.query('BEGIN');
    const locked = await blocker.query<{ cursor: ExportCursor }>(
      'SELECT cursor FROM export_jobs WHERE id = $1 FOR UPDATE',
      [jobId],
    );
    atKill = locked.rows[0]!.cursor;
    let waiting = 0;
    for (let i = 0; i < 600 && waiting === 0; i++) {
      const [row] = await db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      waiting = row!.n;
      if (!waiting) await new Promise((r) => setTimeout(r, 20));
    }
    expect({ waiting, atKill }).toEqual({
      waiting: 1,
      atKill: expect.objectContaining({ page: expect.any(Number) }),
    });
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }
  expect(atKill!.page).toBeGreaterThanOrEqual(2);
  expect(atKill!.page).toBeLessThan(FRAMES);

  // The rescuer writes pages of 2000 frames: what is left is one page.
  await stack.startWorker();
  const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
    commit_id: string;
  };
  const job = await db.exportJob.findUniqueOrThrow({ where: { id: jobId } });
  expect(job.state).toBe('succeeded');
  expect((job.cursor as unknown as ExportCursor).frames).toBe(FRAMES);
  // The killed worker's waiting update may still commit once the lock goes (PostgreSQL notices a
  // dead client only when it next writes to it): its page was fully written, so either way the
  // rescuer continues after a recorded page and writes the rest as one page.
  const finalPage = (job.cursor as unknown as ExportCursor).page;
  // The advisory gate ran page by page (pages of one frame, then the rest): every frame counted
  // once, each car without a plate redaction once.
  expect(job.gate).toMatchObject({
    mode: 'advisory',
    outcome: 'gaps',
    checked_frames: FRAMES,
    frames_without_audit: 0,
    uncovered_objects: FRAMES,
  });
  expect([atKill!.page + 1, atKill!.page + 2]).toContain(finalPage);

  const history = await stack.env.client.workflow.getHandle(res.body.workflow_id).fetchHistory();
  const attempts = history.events!.filter(
    (e) => e.activityTaskStartedEventAttributes && (e.activityTaskStartedEventAttributes.attempt ?? 1) > 1,
  );
  expect(attempts.length).toBeGreaterThan(0);

  const { summary, json } = await cocoOf(outcome.commit_id);
  expect(summary).toMatchObject({ images: FRAMES, annotations: FRAMES });
  const objectIds = (json.annotations as Array<{ object_id: string; id: number }>).map((a) => a.object_id);
  expect(new Set(objectIds).size).toBe(FRAMES);
  expect(new Set((json.annotations as Array<{ id: number }>).map((a) => a.id)).size).toBe(FRAMES);
  expect(new Set((json.images as Array<{ id: number }>).map((i) => i.id)).size).toBe(FRAMES);
  const commit = await db.datasetCommit.findUniqueOrThrow({ where: { commitId: outcome.commit_id } });
  const parts = (commit.files as Array<{ path: string }>).filter((f) =>
    f.path.startsWith('parquet/objects/'),
  );
  expect(parts).toHaveLength(finalPage);
}, 180_000);

it('lists an export that failed part-way as resumable, and resumes it once the cause is fixed', async () => {
  const { db } = stack.api.deps;
  // A frame lost its redacted copy: images leave only redacted, so the export stops there.
  const frame = await db.frame.findFirstOrThrow({ where: { sessionId }, orderBy: { index: 'desc' } });
  await db.frame.update({ where: { id: frame.id }, data: { redactedUri: null } });
  const res = await stack.api.call('POST', '/api/export', {
    token: stack.reviewer,
    body: { name: 'fixed-then-resumed', formats: ['coco'], predicate: { session_ids: [sessionId] } },
  });
  expect(res.status).toBe(202);
  await expect(stack.env.client.workflow.getHandle(res.body.workflow_id).result()).rejects.toThrow();
  const jobId = res.body.job_id as string;

  const list = await stack.api.call('GET', '/api/exports/resumable', { token: stack.reviewer });
  expect(list.status).toBe(200);
  const listed = list.body.items.find((j: { job_id: string }) => j.job_id === jobId);
  expect(listed).toMatchObject({ state: 'failed', resumable: true });
  expect(listed.error).toContain(`frame ${frame.id} has no redacted copy`);

  await db.frame.update({ where: { id: frame.id }, data: { redactedUri: frame.redactedUri } });
  const resumed = await stack.api.call('POST', `/api/exports/${jobId}/resume`, { token: stack.reviewer });
  expect(resumed.status).toBe(202);
  expect(resumed.headers.get('location')).toBe(`/api/exports/${jobId}/progress`);
  await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
  const progress = await stack.api.call('GET', `/api/exports/${jobId}/progress`, { token: stack.reviewer });
  expect(progress.body).toMatchObject({
    state: 'succeeded',
    resumable: false,
    progress: { frames_done: FRAMES },
  });
  expect(progress.body.commit_id).toMatch(/^[0-9a-f]{64}$/);
  const again = await stack.api.call('POST', `/api/exports/${jobId}/resume`, { token: stack.reviewer });
  expect(again.status).toBe(409);
  expect(again.body.detail).toContain('already finished');
});

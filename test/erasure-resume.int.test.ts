import pg from 'pg';
import { listKeys } from '../activities/ingest/storage';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { spawnWorkerProcess } from '../testkit/worker-process';

/**
 * An erasure whose cpu worker dies (SIGKILL) in the middle — its stored objects deleted, its rows
 * not yet — is finished by another worker: the step runs again once its heartbeat times out, and
 * the proof is complete (docs/erasure.md).
 */
let stack: IngestStack;

beforeAll(async () => {
  // No in-process worker at first: the doomed child process must take the erasure.
  stack = await startIngestStack({ worker: false });
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

it('finishes an erasure whose worker was killed mid-way, proving every place empty', async () => {
  const { db, storage } = stack.api.deps;
  const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
  const { session, frames } = await createSessionFixture({ db, storage }, { frames: 4, redacted: true });
  for (const f of frames) {
    await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
    await db.annoObject.create({
      data: { frameId: f.id, classId: car.id, bbox: [1, 1, 20, 20], source: 'human', state: 'accepted' },
    });
  }
  const doomed = spawnWorkerProcess('workers-cpu/main.ts', {
    DATABASE_URL: stack.db.url,
    APP_DATABASE__URL: stack.db.url,
    APP_TEMPORAL__ADDRESS: stack.env.address,
  });
  for (let i = 0; i < 240 && !/workers-cpu polling/.test(doomed.output()); i++)
    await new Promise((r) => setTimeout(r, 250));
  expect(doomed.output()).toMatch(/workers-cpu polling/);

  // Hold a frame row: deleting the session (step 5) cascades to it and waits, after the stored
  // objects are gone (step 4). The worker is killed while it waits.
  const blocker = new pg.Client({ connectionString: stack.db.url });
  await blocker.connect();
  let workflowId: string;
  try {
    await blocker.query('BEGIN');
    await blocker.query('SELECT id FROM frames WHERE id = $1 FOR UPDATE', [frames[0]!.id]);
    const res = await stack.api.call('POST', '/api/govern/erase', {
      token: stack.admin,
      body: { session_id: session.id },
    });
    expect(res.status).toBe(202);
    workflowId = res.body.workflow_id as string;
    let waiting = 0;
    for (let i = 0; i < 1500 && waiting === 0; i++) {
      const [row] = await db.$queryRaw<Array<{ n: number }>>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
      waiting = row!.n;
      if (!waiting) await new Promise((r) => setTimeout(r, 20));
    }
    expect({ waiting, log: waiting ? '' : doomed.output().slice(-2000) }).toEqual({ waiting: 1, log: '' });
    // Mid-way: the images are deleted, the rows are not.
    expect(await listKeys(storage, storage.bucket('frames'), `test/${session.id}/`)).toEqual([]);
    expect(await db.frame.count({ where: { sessionId: session.id } })).toBe(4);
    doomed.proc.kill('SIGKILL');
    expect(await doomed.exited).toBe('SIGKILL');
  } finally {
    await blocker.query('ROLLBACK');
    await blocker.end();
  }

  await stack.startWorker();
  await stack.env.client.workflow.getHandle(workflowId).result();
  const erasure = await db.erasure.findFirstOrThrow({ where: { sessionId: session.id } });
  expect(erasure).toMatchObject({ status: 'completed', error: null });
  expect(erasure.proof).toMatchObject({ complete: true, not_empty: [] });
  expect(await db.session.count({ where: { id: session.id } })).toBe(0);
  expect(await db.frame.count({ where: { sessionId: session.id } })).toBe(0);
  // The history shows the step attempted again after the first attempt's heartbeat timed out.
  const events = (await stack.env.client.workflow.getHandle(workflowId).fetchHistory()).events ?? [];
  const retried = events.find((e) => (e.activityTaskStartedEventAttributes?.attempt ?? 1) > 1);
  expect(retried?.activityTaskStartedEventAttributes?.lastFailure?.timeoutFailureInfo).toBeTruthy();
}, 180_000);

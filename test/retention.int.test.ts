import path from 'node:path';
import { ensureRetentionSchedule } from '../activities/govern/retention';
import { RETENTION_SCHEDULE_ID } from '../core/govern/retention';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { testConfig } from '../testkit/stack';
import { recordHistoryIfAsked, replayRecordedHistory } from '../testkit/temporal';

/**
 * Retention on the real stack (PostgreSQL, Temporal with its schedules, MinIO, the cpu worker):
 * what is due, a dry-run sweep that erases nothing, a real one that erases what is past its
 * retention_until through the erasure workflow, and the schedule every cpu worker keeps as
 * configured (docs/erasure.md).
 */
const HISTORY = path.join(__dirname, 'histories/retention-sweep.json');
let stack: IngestStack;
let past: string;
let future: string;

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  for (const [name, until] of [
    ['expired drive', '2020-01-01T00:00:00Z'],
    ['kept drive', '2099-01-01T00:00:00Z'],
  ] as const) {
    const { session } = await createSessionFixture(
      { db, storage },
      { frames: 2, redacted: true, session: { name } },
    );
    const res = await call('POST', '/api/govern/consent', stack.admin, {
      session_id: session.id,
      consent_status: 'granted',
      retention_until: until,
    });
    expect(res.status).toBe(200);
    if (name === 'expired drive') past = session.id;
    else future = session.id;
  }
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const sweep = async (body: unknown) => {
  const res = await call('POST', '/api/govern/retention/sweep', stack.admin, body);
  expect([res.status, res.headers.get('location')]).toEqual([202, '/api/govern/retention/due']);
  const outcome = await stack.env.client.workflow.getHandle(res.body.workflow_id).result();
  return { res, outcome };
};

it('lists what is due with what erasing it would delete, and the plan', async () => {
  const res = await call('GET', '/api/govern/retention/due', stack.admin);
  expect(res.status).toBe(200);
  expect(res.body).toMatchObject({
    total_due: 1,
    sessions: [
      {
        session_id: past,
        name: 'expired drive',
        retention_until: '2020-01-01T00:00:00.000Z',
        would_delete: { frames: 2, objects: 0 },
        blocked_by: null,
      },
    ],
    plan: { erase: [past], skip: [] },
    schedule: { enabled: true, spec: '0 3 * * *', limit: 100 },
  });
  expect((await call('GET', '/api/govern/retention/due', stack.reviewer)).status).toBe(403);
});

it('runs a dry run by default: the plan is recorded, nothing is erased', async () => {
  const { res, outcome } = await sweep({});
  expect(res.body).toMatchObject({ dry_run: true, status: 'running' });
  expect(outcome).toMatchObject({ erased: 0, failed: 0 });
  expect(await stack.api.deps.db.session.count({ where: { id: past } })).toBe(1);
  const due = await call('GET', '/api/govern/retention/due', stack.admin);
  expect(due.body.recent_sweeps[0]).toMatchObject({
    dry_run: true,
    status: 'completed',
    result: { total_due: 1, planned: 1, erased: [] },
  });
});

it('erases what is past its retention through the erasure workflow, and keeps the rest', async () => {
  const { res, outcome } = await sweep({ dry_run: false });
  expect(outcome).toEqual({ sweep_id: res.body.sweep_id, erased: 1, failed: 0 });
  await recordHistoryIfAsked(HISTORY, () =>
    stack.env.client.workflow.getHandle(res.body.workflow_id).fetchHistory(),
  );
  await expect(
    replayRecordedHistory(HISTORY, require.resolve('../workflows'), 'recorded'),
  ).resolves.toBeUndefined();
  const { db } = stack.api.deps;
  expect(await db.session.count({ where: { id: past } })).toBe(0);
  expect(await db.frame.count({ where: { sessionId: future } })).toBe(2);
  const erasure = await db.erasure.findFirstOrThrow({ where: { sessionId: past } });
  expect(erasure).toMatchObject({ reason: 'retention', status: 'completed', proof: { complete: true } });
  const due = await call('GET', '/api/govern/retention/due', stack.admin);
  expect(due.body).toMatchObject({ total_due: 0, sessions: [], plan: { erase: [] } });
  expect(due.body.recent_sweeps[0]).toMatchObject({
    dry_run: false,
    status: 'completed',
    result: { erased: [{ erasure_id: erasure.id, outcome: 'completed' }] },
  });
});

it('refuses bad input and callers below admin', async () => {
  for (const body of [{ dry_run: 'yes' }, { dry_run: false, limit: 3 }])
    expect((await call('POST', '/api/govern/retention/sweep', stack.admin, body)).status).toBe(422);
  expect((await call('POST', '/api/govern/retention/sweep', stack.reviewer, {})).status).toBe(403);
  expect((await call('GET', '/api/govern/retention/due?limit=0', stack.admin)).status).toBe(422);
});

it('keeps the schedule as configured: created, updated, paused, and its sweeps run', async () => {
  const client = stack.env.client;
  const base = { DATABASE_URL: stack.db.url, APP_TEMPORAL__ADDRESS: stack.env.address };
  await ensureRetentionSchedule(client, testConfig({ ...base, APP_RETENTION__SCHEDULE: '24h' }));
  const handle = client.schedule.getHandle(RETENTION_SCHEDULE_ID);
  let described = await handle.describe();
  expect(described.spec.intervals?.[0]?.every).toBe(86_400_000);
  expect(described.state.paused).toBe(false);
  await ensureRetentionSchedule(client, testConfig({ ...base, APP_RETENTION__ENABLED: 'false' }));
  described = await handle.describe();
  expect(described.state.paused).toBe(true);
  expect(described.spec.calendars?.length).toBe(1);
  await ensureRetentionSchedule(client, testConfig(base));
  expect((await handle.describe()).state.paused).toBe(false);

  // The schedule's action starts the sweep workflow by its type name on the cpu queue.
  const before = await stack.api.deps.db.governanceRun.count({ where: { kind: 'retention-sweep' } });
  await handle.trigger();
  let scheduled;
  for (let i = 0; i < 200 && !scheduled; i++) {
    scheduled = await stack.api.deps.db.governanceRun.findFirst({
      where: {
        kind: 'retention-sweep',
        status: 'completed',
        params: { path: ['trigger'], equals: 'schedule' },
      },
    });
    if (!scheduled) await new Promise((r) => setTimeout(r, 100));
  }
  expect(scheduled).toMatchObject({ dryRun: false, result: { total_due: 0, erased: [] } });
  expect(await stack.api.deps.db.governanceRun.count({ where: { kind: 'retention-sweep' } })).toBe(
    before + 1,
  );
  await handle.delete();
});

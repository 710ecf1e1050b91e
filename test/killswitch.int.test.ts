import pg from 'pg';
import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';
import { createTrainingCommit } from '../testkit/training';
import { createVehicleSession, vehicleFrames } from '../testkit/media/vehicles';

/**
 * An operator engages the kill switch on the real stack (PostgreSQL, Temporal, MinIO, the cpu
 * worker; no gpu worker, so GPU work waits for the slot) with an auto-label, a training run and an
 * export in flight: all three stop and end cancelled, nothing new starts until release, and every
 * step is audited (docs/killswitch.md).
 */
let stack: IngestStack;

const call = (method: string, p: string, token: string, body?: unknown) =>
  stack.api.call(method, p, { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

async function untilWaitingOnLock(): Promise<void> {
  for (let i = 0; i < 2400; i++) {
    const [row] = await stack.api.deps.db.$queryRaw<Array<{ n: number }>>`
      SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
    if (row!.n) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('no session came to wait on the lock');
}

describe('kill switch', () => {
  let autolabelId: string;
  let trainingId: string;
  let exportId: string;
  let sessionId: string;
  let commitId: string;

  it('stops an auto-label, a training run and an export in flight: each ends cancelled', async () => {
    const { db, storage } = stack.api.deps;
    sessionId = (await createVehicleSession(stack.api.deps, await vehicleFrames(2, { width: 640 }))).session
      .id;
    const autolabel = await call('POST', '/api/autolabel/start', stack.reviewer, { session_id: sessionId });
    expect(autolabel.status).toBe(202);
    autolabelId = autolabel.body.job_id;
    const commit = await createTrainingCommit(stack.api.deps, { train: 2, val: 1, width: 320 });
    commitId = commit.commitId;
    const training = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commitId,
      config: { epochs: 1 },
    });
    expect(training.status).toBe(202);
    trainingId = training.body.job_id;

    // The export's job row is held, so its first step waits on it, running, when the switch comes.
    const car = await db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } });
    const drive = await createSessionFixture({ db, storage }, { frames: 2, redacted: true });
    for (const f of drive.frames) {
      await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
      await db.annoObject.create({
        data: { frameId: f.id, classId: car.id, bbox: [1, 1, 20, 20], source: 'human', state: 'accepted' },
      });
    }
    const blocker = new pg.Client({ connectionString: stack.db.url });
    await blocker.connect();
    let engaged;
    try {
      await blocker.query('BEGIN');
      const ex = await call('POST', '/api/export', stack.reviewer, {
        name: 'in-flight',
        formats: ['coco'],
        predicate: { session_ids: [drive.session.id] },
      });
      expect(ex.status).toBe(202);
      exportId = ex.body.job_id;
      await blocker.query('SELECT 1 FROM export_jobs WHERE id = $1 FOR UPDATE', [exportId]);
      await untilWaitingOnLock();
      engaged = await call('POST', '/api/govern/killswitch/engage', stack.admin, {
        reason: 'incident 42: bad labels',
      });
    } finally {
      await blocker.query('ROLLBACK');
      await blocker.end();
    }
    expect(engaged.status).toBe(200);
    expect(engaged.body.killswitch).toMatchObject({ engaged: true, reason: 'incident 42: bad labels' });
    const stopped = engaged.body.stopped as Array<{
      kind: string;
      job_id: string;
      outcome: string;
      cancel_workflow_id: string;
    }>;
    expect(stopped.map((s) => [s.kind, s.job_id, s.outcome]).sort()).toEqual(
      [
        ['autolabel', autolabelId, 'stopping'],
        ['export', exportId, 'stopping'],
        ['training', trainingId, 'stopping'],
      ].sort(),
    );
    for (const s of stopped) await stack.env.client.workflow.getHandle(s.cancel_workflow_id).result();
    expect((await db.autolabelJob.findUniqueOrThrow({ where: { id: autolabelId } })).state).toBe('cancelled');
    expect((await db.trainingJob.findUniqueOrThrow({ where: { id: trainingId } })).status).toBe('cancelled');
    expect((await db.exportJob.findUniqueOrThrow({ where: { id: exportId } })).state).toBe('cancelled');
    expect(await db.gpuSlot.count()).toBe(0);

    const state = await call('GET', '/api/govern/state', stack.reviewer);
    expect(state.status).toBe(200);
    expect(state.body.stopped.map((s: { state: string }) => s.state)).toEqual([
      'cancelled',
      'cancelled',
      'cancelled',
    ]);
  });

  it('refuses every new start with the reason while engaged, creating nothing', async () => {
    const { db } = stack.api.deps;
    const counts = async () => [
      await db.autolabelJob.count(),
      await db.trainingJob.count(),
      await db.exportJob.count(),
      await db.agentRun.count(),
    ];
    const before = await counts();
    const starts: Array<[string, unknown]> = [
      ['/api/autolabel/start', { session_id: sessionId }],
      ['/api/training/start', { dataset_commit_id: commitId, config: { epochs: 1 } }],
      ['/api/export', { name: 'refused', formats: ['coco'], predicate: { session_ids: [sessionId] } }],
      ['/api/autolabel/redetect-all', { session_ids: [sessionId] }],
      ['/api/drivable/backfill', { session_ids: [sessionId] }],
    ];
    for (const [path, body] of starts) {
      const res = await call('POST', path, stack.admin, body);
      expect([path, res.status]).toEqual([path, 409]);
      expect(res.body.detail).toMatch(
        /may not start: the kill switch is engaged since .* incident 42: bad labels; POST \/api\/govern\/killswitch\/release/,
      );
    }
    expect(await counts()).toEqual(before);
  });

  it('engages again without changing who engaged it first, and releases once', async () => {
    const first = (await call('GET', '/api/govern/state', stack.reviewer)).body.killswitch;
    const again = await call('POST', '/api/govern/killswitch/engage', stack.admin, {
      reason: 'still investigating',
    });
    expect(again.body.killswitch).toMatchObject({
      engaged: true,
      reason: 'still investigating',
      engaged_at: first.engaged_at,
    });
    expect(again.body.stopped).toEqual([]);
    const released = await call('POST', '/api/govern/killswitch/release', stack.admin);
    expect(released.status).toBe(200);
    expect(released.body.killswitch).toMatchObject({ engaged: false, released_at: expect.any(String) });
    expect((await call('POST', '/api/govern/killswitch/release', stack.admin)).status).toBe(409);
    const { db } = stack.api.deps;
    expect(await db.auditLog.count({ where: { action: 'killswitch.engaged' } })).toBe(2);
    expect(await db.auditLog.count({ where: { action: 'killswitch.released' } })).toBe(1);
  });

  it('lets work start again once released', async () => {
    const res = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commitId,
      config: { epochs: 1 },
    });
    expect(res.status).toBe(202);
    const cancelled = await call('POST', `/api/jobs/training/${res.body.job_id}/cancel`, stack.reviewer);
    expect(cancelled.status).toBe(202);
    await stack.env.client.workflow.getHandle(cancelled.body.cancel_workflow_id).result();
  });

  it('is for admins, and refuses a body without a reason', async () => {
    expect(
      (await call('POST', '/api/govern/killswitch/engage', stack.reviewer, { reason: 'x' })).status,
    ).toBe(403);
    expect((await call('POST', '/api/govern/killswitch/release', stack.reviewer)).status).toBe(403);
    for (const body of [{}, { reason: '' }, { reason: 'x', extra: true }])
      expect((await call('POST', '/api/govern/killswitch/engage', stack.admin, body)).status).toBe(422);
    expect((await call('GET', '/api/govern/state', stack.annotator)).status).toBe(403);
  });
});

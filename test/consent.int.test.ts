import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createExportableDrive } from '../testkit/session-fixtures';

/**
 * A data-protection officer records consent on the real stack (PostgreSQL, Temporal, MinIO, the
 * cpu worker): a withdrawn drive vanishes from the next export, a commit that holds it can no
 * longer be downloaded or trained on, the gate route says what the status blocks and who holds
 * it, and every change is audited and announced (docs/consent.md).
 */
let stack: IngestStack;
let carId: number;

beforeAll(async () => {
  stack = await startIngestStack();
  carId = (await stack.api.deps.db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
}, 120_000);

afterAll(async () => {
  await stack?.close();
});

const drive = (name: string) => createExportableDrive(stack.api.deps, { name, frames: 3, classId: carId });

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, body });

async function exportBoth(name: string, sessionIds: string[]) {
  const res = await call('POST', '/api/export', stack.reviewer, {
    name,
    formats: ['coco'],
    predicate: { session_ids: sessionIds },
    split: { seed: 1, train: 1, val: 0, test: 0 },
  });
  expect([res.status, res.body.detail]).toEqual([202, undefined]);
  const outcome = (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as {
    state: string;
    commit_id: string;
  };
  expect(outcome.state).toBe('succeeded');
  const commit = await stack.api.deps.db.datasetCommit.findUniqueOrThrow({
    where: { commitId: outcome.commit_id },
  });
  return { res, commit };
}

describe('consent', () => {
  let kept: Awaited<ReturnType<typeof drive>>;
  let withdrawn: Awaited<ReturnType<typeof drive>>;
  let before: Awaited<ReturnType<typeof exportBoth>>;

  beforeAll(async () => {
    kept = await drive('consented drive');
    withdrawn = await drive('withdrawn drive');
    before = await exportBoth('before-withdrawal', [kept.sessionId, withdrawn.sessionId]);
  });

  it('records a withdrawal, audited with before and after and announced to admins, and says what it blocks', async () => {
    expect(before.commit.sessionIds.sort()).toEqual([kept.sessionId, withdrawn.sessionId].sort());
    const res = await call('POST', '/api/govern/consent', stack.admin, {
      session_id: withdrawn.sessionId,
      consent_status: 'withdrawn',
      legal_basis: 'data subject request 2026-114',
      retention_until: '2027-01-31T00:00:00Z',
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      session_id: withdrawn.sessionId,
      consent_status: 'withdrawn',
      legal_basis: 'data subject request 2026-114',
      retention_until: '2027-01-31T00:00:00.000Z',
      previous: { consent_status: 'unknown', legal_basis: null, retention_until: null },
      gate: { blocking: true, blocks: { export: true, training: true, campaigns: true } },
    });
    const { db } = stack.api.deps;
    const audit = await db.auditLog.findFirstOrThrow({
      where: { action: 'session.consent', subjectId: withdrawn.sessionId },
    });
    expect(audit.detail).toMatchObject({
      before: { consent_status: 'unknown' },
      after: { consent_status: 'withdrawn', legal_basis: 'data subject request 2026-114' },
    });
    const event = await db.platformEvent.findFirstOrThrow({
      where: { kind: 'session.consent_changed', subjectId: withdrawn.sessionId },
    });
    expect(event.payload).toMatchObject({ before: 'unknown', after: 'withdrawn', name: 'withdrawn drive' });
  });

  it('leaves the withdrawn drive out of the next export and names it on the job', async () => {
    const after = await exportBoth('after-withdrawal', [kept.sessionId, withdrawn.sessionId]);
    expect(after.res.body.consent_excluded).toEqual([
      { session_id: withdrawn.sessionId, name: 'withdrawn drive', consent_status: 'withdrawn' },
    ]);
    expect(after.commit.sessionIds).toEqual([kept.sessionId]);
    const job = await call('GET', `/api/exports/${after.res.body.job_id}/progress`, stack.reviewer);
    expect(job.status).toBe(200);
    expect(job.body.consent_excluded).toEqual([expect.objectContaining({ session_id: withdrawn.sessionId })]);
    // A slice of the withdrawn drive alone has nothing left to export.
    const alone = await call('POST', '/api/export', stack.reviewer, {
      name: 'withdrawn-alone',
      formats: ['coco'],
      predicate: { session_ids: [withdrawn.sessionId] },
    });
    expect(alone.status).toBe(422);
    expect(alone.body.detail).toMatch(
      /no objects to export once 1 session\(s\) may not be exported.*withdrawn drive/,
    );
  });

  it('refuses to download or train on a commit made before the withdrawal, naming the session', async () => {
    const commitId = before.commit.commitId;
    const download = await stack.api.call('GET', `/api/datasets/${commitId}/download`, {
      token: stack.reviewer,
    });
    expect(download.status).toBe(422);
    expect(download.body.detail).toMatch(
      /may not be exported because of their consent status: withdrawn drive/,
    );
    const training = await call('POST', '/api/training/start', stack.reviewer, {
      dataset_commit_id: commitId,
    });
    expect(training.status).toBe(422);
    expect(training.body).toMatchObject({
      use: 'training',
      blocked_sessions: [{ session_id: withdrawn.sessionId, consent_status: 'withdrawn' }],
    });
    expect(await stack.api.deps.db.trainingJob.count()).toBe(0);
  });

  it('lists what a status blocks, where, and the sessions holding it', async () => {
    const gate = await call('GET', '/api/govern/consent/withdrawn/gate', stack.reviewer);
    expect(gate.status).toBe(200);
    expect(gate.body).toMatchObject({
      consent_status: 'withdrawn',
      blocking: true,
      blocking_statuses: ['withdrawn', 'missing'],
      sessions: { total: 1, items: [{ session_id: withdrawn.sessionId, name: 'withdrawn drive' }] },
    });
    expect(gate.body.enforced_at.export.length).toBeGreaterThan(0);
    const granted = await call('GET', '/api/govern/consent/granted/gate', stack.reviewer);
    expect(granted.body).toMatchObject({ blocking: false, sessions: { total: 0, items: [] } });
  });

  it('gives consent back: granted again, the drive exports again', async () => {
    const res = await call('POST', '/api/govern/consent', stack.admin, {
      session_id: withdrawn.sessionId,
      consent_status: 'granted',
    });
    // An omitted legal basis and retention date keep what was recorded.
    expect(res.body).toMatchObject({
      consent_status: 'granted',
      legal_basis: 'data subject request 2026-114',
    });
    const again = await exportBoth('granted-again', [kept.sessionId, withdrawn.sessionId]);
    expect(again.res.body.consent_excluded).toEqual([]);
    expect(again.commit.sessionIds.sort()).toEqual([kept.sessionId, withdrawn.sessionId].sort());
  });

  it('refuses bad input, unknown sessions and callers below admin, changing nothing', async () => {
    const { db } = stack.api.deps;
    const audits = await db.auditLog.count({ where: { action: 'session.consent' } });
    const cases: Array<[string, unknown, number]> = [
      [stack.admin, { session_id: kept.sessionId, consent_status: 'maybe' }, 422],
      [stack.admin, { session_id: 'not-a-uuid', consent_status: 'granted' }, 422],
      [stack.admin, { session_id: kept.sessionId, consent_status: 'granted', retention_until: 'soon' }, 422],
      [stack.admin, { session_id: kept.sessionId, consent_status: 'granted', extra: 1 }, 422],
      [stack.admin, { session_id: '00000000-0000-4000-8000-000000000000', consent_status: 'granted' }, 404],
      [stack.reviewer, { session_id: kept.sessionId, consent_status: 'withdrawn' }, 403],
    ];
    for (const [token, body, status] of cases) {
      const res = await call('POST', '/api/govern/consent', token, body);
      expect([res.status, res.headers.get('content-type')]).toEqual([
        status,
        expect.stringContaining('problem+json'),
      ]);
    }
    expect(await db.auditLog.count({ where: { action: 'session.consent' } })).toBe(audits);
    expect((await db.session.findUniqueOrThrow({ where: { id: kept.sessionId } })).consentStatus).toBe(
      'unknown',
    );
    expect((await call('GET', '/api/govern/consent/perhaps/gate', stack.reviewer)).status).toBe(422);
  });
});

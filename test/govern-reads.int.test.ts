import { startIngestStack, type IngestStack } from '../testkit/media/harness';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The governance reads on the real stack: the append-only audit log (filters, a time range, paging,
 * no route that writes it) and the lineage of a session, a dataset commit, an object and a model
 * version (docs/governance-reads.md).
 */
let stack: IngestStack;
let sessionId: string;
let objectId: string;
let commitId: string;

const call = (method: string, path: string, token: string, body?: unknown) =>
  stack.api.call(method, path, { token, body });

beforeAll(async () => {
  stack = await startIngestStack();
  const { db, storage } = stack.api.deps;
  const carId = (await db.ontologyClass.findFirstOrThrow({ where: { name: 'car' } })).id;
  const { session, frames } = await createSessionFixture(
    { db, storage },
    { frames: 2, redacted: true, session: { name: 'audited drive' } },
  );
  sessionId = session.id;
  for (const f of frames) await db.piiAudit.create({ data: { frameId: f.id, nFaces: 0, regions: [] } });
  objectId = (
    await db.annoObject.create({
      data: {
        frameId: frames[0]!.id,
        classId: carId,
        bbox: [4, 4, 40, 30],
        source: 'human',
        state: 'accepted',
        conf: 1,
      },
    })
  ).id;
  for (const status of ['granted', 'withdrawn', 'granted'])
    expect(
      (
        await call('POST', '/api/govern/consent', stack.admin, {
          session_id: sessionId,
          consent_status: status,
        })
      ).status,
    ).toBe(200);
  const res = await call('POST', '/api/export', stack.reviewer, {
    name: 'governed',
    // Parquet too: a commit's lineage and an object's are read from its tables.
    formats: ['coco', 'parquet'],
    predicate: { session_ids: [sessionId] },
    split: { seed: 1, train: 1, val: 0, test: 0 },
  });
  expect([res.status, res.body.detail]).toEqual([202, undefined]);
  commitId = (
    (await stack.env.client.workflow.getHandle(res.body.workflow_id).result()) as { commit_id: string }
  ).commit_id;
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

describe('GET /api/govern/audit', () => {
  const consentOf = (token = stack.admin, extra = '') =>
    call('GET', `/api/govern/audit?action=session.consent&subject_id=${sessionId}${extra}`, token);

  it('lists the entries newest first, filtered, and pages them without gaps or repeats', async () => {
    const all = await consentOf();
    expect(all.status).toBe(200);
    expect(
      all.body.items.map(
        (e: { detail: { after: { consent_status: string } } }) => e.detail.after.consent_status,
      ),
    ).toEqual(['granted', 'withdrawn', 'granted']);
    expect(all.body.items[0]).toMatchObject({
      action: 'session.consent',
      subject_type: 'session',
      subject_id: sessionId,
    });
    expect(all.body.next_cursor).toBeNull();
    const seen: string[] = [];
    let cursor = '';
    for (;;) {
      const page = await consentOf(stack.admin, `&limit=1${cursor ? `&cursor=${cursor}` : ''}`);
      seen.push(...page.body.items.map((e: { id: string }) => e.id));
      if (!page.body.next_cursor) break;
      cursor = page.body.next_cursor;
    }
    expect(seen).toEqual(all.body.items.map((e: { id: string }) => e.id));
    // The export's own entries are there too, by subject type.
    const exports = await call('GET', '/api/govern/audit?subject_type=export', stack.admin);
    expect(exports.body.items.length).toBeGreaterThan(0);
  });

  it('reads a time range [since, until)', async () => {
    const all = (await consentOf()).body.items as Array<{ created_at: string }>;
    const oldest = all.at(-1)!.created_at;
    const from = await consentOf(stack.admin, `&since=${encodeURIComponent(oldest)}`);
    expect(from.body.items).toHaveLength(3);
    const before = await consentOf(stack.admin, `&until=${encodeURIComponent(oldest)}`);
    expect(before.body.items).toHaveLength(0);
    const backwards = await consentOf(
      stack.admin,
      `&since=${encodeURIComponent(oldest)}&until=${encodeURIComponent(oldest)}`,
    );
    expect(backwards.status).toBe(422);
  });

  it('is admin-only, refuses malformed filters, and no route writes, edits or deletes it', async () => {
    expect((await consentOf(stack.reviewer)).status).toBe(403);
    for (const q of ['cursor=abc', 'limit=0', 'limit=501', 'actor_id=nope', 'since=yesterday', 'colour=red'])
      expect((await call('GET', `/api/govern/audit?${q}`, stack.admin)).status).toBe(422);
    const count = await stack.api.deps.db.auditLog.count();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE'])
      expect((await call(method, '/api/govern/audit', stack.admin, {})).status).toBe(405);
    const writers = stack.api.routes.filter(
      (r) => r.path.startsWith('/api/govern/audit') && r.method !== 'get',
    );
    expect(writers).toEqual([]);
    expect(await stack.api.deps.db.auditLog.count()).toBe(count);
  });
});

describe('GET /api/govern/lineage/{subject}', () => {
  it('follows a session to the commits that hold it, with its consent', async () => {
    const res = await call('GET', `/api/govern/lineage/session:${sessionId}`, stack.reviewer);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      subject: `session:${sessionId}`,
      came_from: { exists: true, session: { name: 'audited drive', consent_status: 'granted' } },
      used_by: { commits: [{ commit_id: commitId }], training_jobs: [], models: [] },
    });
  });

  it('follows a commit back to its sessions and export, and an object into the commit that exported it', async () => {
    const commit = await call('GET', `/api/govern/lineage/commit:${commitId}`, stack.reviewer);
    expect(commit.status).toBe(200);
    expect(commit.body.came_from).toMatchObject({
      sessions: [{ session_id: sessionId, name: 'audited drive', exists: true, objects: 1 }],
      export: { state: 'succeeded' },
      erased_session_ids: [],
    });
    const object = await call('GET', `/api/govern/lineage/object:${objectId}`, stack.reviewer);
    expect(object.status).toBe(200);
    expect(object.body).toMatchObject({
      came_from: { class_name: 'car', source: 'human', session: { session_id: sessionId } },
      used_by: { commits: [{ commit_id: commitId, exported_state: 'accepted' }], commits_scanned: 1 },
    });
  });

  it('answers 404 for what does not exist and 422 for a malformed subject', async () => {
    const missing = [
      'session:00000000-0000-4000-8000-000000000000',
      `commit:${'a'.repeat(64)}`,
      'object:00000000-0000-4000-8000-000000000000',
      'model:nobody@1',
    ];
    for (const subject of missing)
      expect(
        (await call('GET', `/api/govern/lineage/${encodeURIComponent(subject)}`, stack.reviewer)).status,
      ).toBe(404);
    for (const subject of [
      'session:42',
      'frame:00000000-0000-4000-8000-000000000000',
      'commit:xyz',
      'model:',
    ])
      expect(
        (await call('GET', `/api/govern/lineage/${encodeURIComponent(subject)}`, stack.reviewer)).status,
      ).toBe(422);
    expect((await call('GET', `/api/govern/lineage/session:${sessionId}`, stack.annotator)).status).toBe(403);
  });
});

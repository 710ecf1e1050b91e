import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** Assets and generic annotations: same state and concurrency rules as objects. */

let db: TestDatabase;
let api: TestApi;
let annotator: string;
let reviewer: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const call = (method: string, path: string, body?: unknown, token = reviewer) =>
  api.call(method, path, { token, body });

it('registers assets all-or-none and pages through a project', async () => {
  expect(
    (await call('POST', '/api/assets', { project_id: 'p1', items: [{ kind: 'text' }, { kind: 'hologram' }] }))
      .status,
  ).toBe(422);
  expect(await api.deps.db.asset.count()).toBe(0);
  const res = await call(
    'POST',
    '/api/assets',
    {
      project_id: 'p1',
      items: Array.from({ length: 5 }, (_, i) => ({ kind: 'document', name: `doc ${i}` })),
    },
    annotator,
  );
  expect(res.status).toBe(201);
  expect(res.body.items).toHaveLength(5);
  expect(res.body.items[0]).toMatchObject({ project_id: 'p1', kind: 'document', state: 'new', version: 1 });
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { body: { items: Array<{ id: string }>; next_cursor: string | null } } = await call(
      'GET',
      `/api/projects/p1/assets?limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    seen.push(...page.body.items.map((a) => a.id));
    cursor = page.body.next_cursor;
  } while (cursor);
  expect(seen.sort()).toEqual(res.body.items.map((a: { id: string }) => a.id).sort());
  expect((await call('GET', '/api/assets/kinds')).body.kinds).toContain('point_cloud');
});

it('moves an asset along its lifecycle with expected_version', async () => {
  const [asset] = (await call('POST', '/api/assets', { project_id: 'p2', items: [{ kind: 'audio' }] })).body
    .items;
  expect((await call('POST', `/api/assets/${asset.id}/state`, { state: 'reviewed' })).status).toBe(409);
  const moved = await call('POST', `/api/assets/${asset.id}/state`, {
    state: 'in_progress',
    expected_version: 1,
  });
  expect(moved.body).toMatchObject({ state: 'in_progress', version: 2 });
  expect(
    (await call('POST', `/api/assets/${asset.id}/state`, { state: 'submitted', expected_version: 1 })).status,
  ).toBe(409);
  expect((await call('POST', `/api/assets/${asset.id}/state`, { state: 'limbo' })).status).toBe(422);
});

it('annotates with state rules, patches with expected_version, counts and deletes', async () => {
  const [asset] = (await call('POST', '/api/assets', { project_id: 'p3', items: [{ kind: 'text' }] })).body
    .items;
  expect(
    (await call('POST', `/api/assets/${asset.id}/annotations`, { kind: 'span', state: 'done' })).status,
  ).toBe(400);
  const byAnnotator = await call(
    'POST',
    `/api/assets/${asset.id}/annotations`,
    { kind: 'span', label: 'pedestrian', payload: { start: 3, end: 9 } },
    annotator,
  );
  expect(byAnnotator.status).toBe(201);
  expect(byAnnotator.body).toMatchObject({ state: 'submitted', source: 'human', version: 1 });
  const id = byAnnotator.body.id;

  const racing = await Promise.all(
    [1, 2, 3].map((n) =>
      call('PATCH', `/api/annotations/${id}`, { expected_version: 1, label: `label ${n}` }),
    ),
  );
  expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
  expect(racing.filter((r) => r.status === 409)).toHaveLength(2);
  const accepted = await call('PATCH', `/api/annotations/${id}`, { expected_version: 2, state: 'accepted' });
  expect(accepted.body).toMatchObject({ state: 'accepted', version: 3 });
  expect((await call('PATCH', `/api/annotations/${id}`, { state: 'done' })).status).toBe(400);

  await call('POST', '/api/projects/p3/label-config', { labels: ['pedestrian', 'cyclist'] });
  expect(
    (await call('POST', `/api/assets/${asset.id}/annotations`, { kind: 'span', label: 'tree' })).status,
  ).toBe(422);
  expect(
    (
      await call('POST', `/api/assets/${asset.id}/annotations`, {
        kind: 'span',
        label: 'cyclist',
        conf: 0.4,
        source: 'imported',
        state: 'review',
      })
    ).status,
  ).toBe(201);

  const stats = await call('GET', '/api/projects/p3/stats');
  expect(stats.body).toMatchObject({ assets: { total: 1, by_state: { new: 1 } }, annotations: { total: 2 } });
  expect((await call('GET', `/api/assets/${asset.id}/annotations`)).body.items).toHaveLength(2);
  expect((await call('DELETE', `/api/annotations/${id}`, undefined, annotator)).status).toBe(403);
  expect((await call('DELETE', `/api/annotations/${id}`)).status).toBe(200);
  expect((await call('PATCH', `/api/annotations/${id}`, { label: 'x' })).status).toBe(404);
  const audit = await api.deps.db.auditLog.findMany({
    where: { subjectType: 'annotation', subjectId: id },
    orderBy: { id: 'asc' },
  });
  expect(audit.map((a) => a.action)).toEqual([
    'annotation.created',
    'annotation.patched',
    'annotation.patched',
    'annotation.deleted',
  ]);
});

it('lets only a reviewer judge or archive an asset, and reopens an annotation an annotator edits', async () => {
  const [asset] = (await call('POST', '/api/assets', { project_id: 'p9', items: [{ kind: 'text' }] })).body
    .items;
  const move = (state: string, token: string) =>
    call('POST', `/api/assets/${asset.id}/state`, { state }, token);
  expect((await move('in_progress', annotator)).status).toBe(200);
  expect((await move('submitted', annotator)).status).toBe(200);
  const judged = await move('reviewed', annotator);
  expect(judged.status).toBe(403);
  expect(judged.body.detail).toMatch(/needs the reviewer role/);
  expect((await move('archived', annotator)).status).toBe(403);
  expect((await move('archived', reviewer)).status).toBe(200);
  expect((await move('new', annotator)).status).toBe(403);
  expect((await move('new', reviewer)).body).toMatchObject({ state: 'new' });

  const made = await call('POST', `/api/assets/${asset.id}/annotations`, {
    kind: 'span',
    label: 'cyclist',
    state: 'accepted',
  });
  expect(made.body.state).toBe('accepted');
  const edited = await call(
    'PATCH',
    `/api/annotations/${made.body.id}`,
    { payload: { start: 1, end: 2 } },
    annotator,
  );
  expect(edited.status).toBe(200);
  expect(edited.body).toMatchObject({ state: 'submitted', source: 'human' });
});

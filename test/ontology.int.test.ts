import { randomUUID } from 'node:crypto';
import { ONTOLOGY_SEED } from '../core/ontology/classes';
import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** The seeded ontology and its admin routes: add, rename, merge with revert, retire. */

let db: TestDatabase;
let api: TestApi;
let admin: string;
let reviewer: string;
let frameId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  admin = (await createUserWithToken(api.deps, 'admin')).token;
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  frameId = (await createFrame(api.deps)).frame.id;
});
afterAll(async () => {
  if (api) await removeTestBlobs(api.deps);
  await api?.close();
  await db?.drop();
});

const post = (path: string, body?: unknown, token = admin) => api.call('POST', path, { token, body });
const createObject = (class_name: string) =>
  api.call('POST', `/api/frames/${frameId}/objects`, {
    token: reviewer,
    body: { class_name, bbox: [1, 1, 20, 20] },
  });

it('serves the migration-seeded ontology: exactly core/ontology/classes.ts, with the spec counts', async () => {
  const res = await api.call('GET', '/api/ontology', { token: reviewer });
  expect(res.status).toBe(200);
  expect(res.body.counts).toEqual({
    classes: 166,
    retired: 0,
    india: 83,
    by_l0: { object: 83, infra: 58, surface: 22, ignore: 3 },
  });
  expect(res.body.safety_l1).toEqual(['vru', 'animal', 'two_wheeler']);
  expect(Object.values(res.body.l1_by_l0).flat()).toHaveLength(13);
  expect(
    res.body.classes.map((c: Record<string, unknown>) => ({
      id: c.id,
      name: c.name,
      l0: c.l0,
      l1: c.l1,
      india: c.india,
      parent: c.parent,
      sources: c.sources,
    })),
  ).toEqual(
    ONTOLOGY_SEED.map((c) => ({
      id: c.id,
      name: c.name,
      l0: c.l0,
      l1: c.l1,
      india: c.india,
      parent: c.parent,
      sources: c.sources,
    })),
  );
  expect(res.body.classes.find((c: { name: string }) => c.name === 'motorcyclist').safety).toBe(true);
  expect(res.body.classes.find((c: { name: string }) => c.name === 'car').safety).toBe(false);
});

it('adds a class after the seed ids, refusing broken ones and non-admins', async () => {
  const res = await post('/api/ontology/classes', {
    name: 'hovercraft',
    l0: 'object',
    l1: 'vehicle',
    parent: 'other_vehicle',
  });
  expect(res.status).toBe(201);
  expect(res.body).toMatchObject({ id: 167, name: 'hovercraft', india: false });
  expect(
    (await post('/api/ontology/classes', { name: 'hovercraft', l0: 'object', l1: 'vehicle' })).status,
  ).toBe(409);
  expect((await post('/api/ontology/classes', { name: 'kiosk', l0: 'infra', l1: 'vehicle' })).status).toBe(
    422,
  );
  expect(
    (await post('/api/ontology/classes', { name: 'Bad Name', l0: 'object', l1: 'vehicle' })).status,
  ).toBe(422);
  expect(
    (await post('/api/ontology/classes', { name: 'kiosk', l0: 'infra', l1: 'structure' }, reviewer)).status,
  ).toBe(403);
  expect((await createObject('hovercraft')).status).toBe(201);
});

it('renames a class, keeps the old name as an alias, and reverts', async () => {
  const res = await post('/api/ontology/classes/rename', { from: 'hovercraft', to: 'air_cushion_vehicle' });
  expect(res.status).toBe(200);
  expect((await createObject('hovercraft')).body.class_name).toBe('air_cushion_vehicle');
  expect(
    (await post('/api/ontology/classes/rename', { from: 'air_cushion_vehicle', to: 'car' })).status,
  ).toBe(409);
  const revert = await post(`/api/ontology/merges/${res.body.run_id}/revert`);
  expect(revert.status).toBe(200);
  expect((await createObject('hovercraft')).body.class_name).toBe('hovercraft');
  expect((await createObject('air_cushion_vehicle')).status).toBe(422);
  expect((await post(`/api/ontology/merges/${res.body.run_id}/revert`)).status).toBe(409);
});

it('merges classes rewriting their objects in one run; revert restores them and skips later edits', async () => {
  const sedans = await Promise.all([createObject('sedan'), createObject('sedan'), createObject('hatchback')]);
  const ids = sedans.map((r) => r.body.id as string);
  const merge = await post('/api/ontology/classes/merge', { sources: ['sedan', 'hatchback'], into: 'car' });
  expect(merge.status).toBe(200);
  expect(merge.body.objects_rewritten).toBe(3);
  const car = (await api.deps.db.ontologyClass.findUniqueOrThrow({ where: { name: 'car' } })).id;
  const moved = await api.deps.db.annoObject.findMany({ where: { id: { in: ids } } });
  expect(moved.every((o) => o.classId === car && o.version === 2)).toBe(true);
  expect((await createObject('sedan')).body.class_name).toBe('car'); // alias
  const onto = (await api.call('GET', '/api/ontology', { token: reviewer })).body;
  expect(onto.classes.find((c: { name: string }) => c.name === 'sedan').retired).toBe(true);
  expect(onto.counts.classes).toBe(166 + 1 - 2);
  const history = await api.call('GET', `/api/objects/${ids[0]}/history`, { token: reviewer });
  expect(history.body.events.map((e: { action: string }) => e.action)).toContain('object.class.merged');

  // A reviewer edits one merged object afterwards: the revert leaves that one alone.
  expect(
    (
      await api.call('POST', `/api/objects/${ids[2]}/review`, {
        token: reviewer,
        body: { action: 'confirm' },
      })
    ).status,
  ).toBe(200);
  const revert = await post(`/api/ontology/merges/${merge.body.run_id}/revert`);
  expect(revert.status).toBe(200);
  expect(revert.body).toMatchObject({ kind: 'merge', reverted: 2, skipped: [ids[2]] });
  const back = await api.deps.db.annoObject.findMany({
    where: { id: { in: ids } },
    include: { class: true },
  });
  expect(back.find((o) => o.id === ids[0])!.class.name).toBe('sedan');
  expect(back.find((o) => o.id === ids[2])!.class.name).toBe('car');
  expect((await createObject('sedan')).body.class_name).toBe('sedan');
  expect((await post('/api/ontology/classes/merge', { sources: ['car'], into: 'road' })).status).toBe(422);
  expect((await post('/api/ontology/classes/merge', { sources: ['car'], into: 'car' })).status).toBe(422);
  expect((await post(`/api/ontology/merges/${randomUUID()}/revert`)).status).toBe(404);
});

it('retires a class: new objects refused, existing ones kept', async () => {
  const kept = await createObject('tempo');
  const res = await post('/api/ontology/classes/retire', { name: 'tempo' });
  expect(res.status).toBe(200);
  const refused = await createObject('tempo');
  expect(refused.status).toBe(422);
  expect(refused.body.detail).toMatch(/retired/);
  expect((await api.call('GET', `/api/objects/${kept.body.id}`, { token: reviewer })).body.class_name).toBe(
    'tempo',
  );
  expect((await post('/api/ontology/classes/retire', { name: 'tempo' })).status).toBe(422);
  expect((await post('/api/ontology/classes/retire', { name: 'nothing_here' })).status).toBe(404);
});

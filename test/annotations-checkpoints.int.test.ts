import { createFrame, maskKeys, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** Checkpoints: save, list, read, restore (one transaction, undoable), delete; history and audit. */

let db: TestDatabase;
let api: TestApi;
let annotator: string;
let reviewer: string;
let frameId: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  frameId = (await createFrame(api.deps)).frame.id;
});
afterAll(async () => {
  if (api) await removeTestBlobs(api.deps);
  await api?.close();
  await db?.drop();
});

const create = (body: Record<string, unknown>) =>
  api.call('POST', `/api/frames/${frameId}/objects`, { token: reviewer, body });

it('saves a checkpoint, restores it after edits, and the restore can itself be undone', async () => {
  const car = (await create({ class_name: 'car', bbox: [10, 10, 50, 50] })).body;
  const road = (
    await create({
      class_name: 'road',
      bbox: [0, 200, 640, 360],
      mask_polygons: [[0, 200, 640, 200, 640, 360]],
    })
  ).body;

  expect(
    (
      await api.call('POST', `/api/frames/${frameId}/checkpoints`, {
        token: annotator,
        body: { note: 'no name' },
      })
    ).status,
  ).toBe(422);
  const cp = await api.call('POST', `/api/frames/${frameId}/checkpoints`, {
    token: annotator,
    body: { name: 'first pass' },
  });
  expect(cp.status).toBe(201);
  expect(cp.body).toMatchObject({ name: 'first pass', note: null, object_count: 2 });

  // Edits after the save: a relabel, a new mask, a deletion, an addition.
  await api.call('POST', `/api/objects/${car.id}/review`, {
    token: reviewer,
    body: { action: 'relabel', class_name: 'bus' },
  });
  await api.call('PUT', `/api/objects/${road.id}/mask`, {
    token: reviewer,
    body: { polygons: [[0, 300, 640, 300, 640, 360]] },
  });
  const extra = (
    await create({
      class_name: 'dog',
      bbox: [100, 100, 120, 120],
      mask_polygons: [[100, 100, 120, 100, 120, 120]],
    })
  ).body;
  await api.call('DELETE', `/api/objects/${car.id}`, { token: reviewer });

  expect(
    (await api.call('POST', `/api/checkpoints/${cp.body.id}/restore`, { token: annotator })).status,
  ).toBe(403);
  const restore = await api.call('POST', `/api/checkpoints/${cp.body.id}/restore`, { token: reviewer });
  expect(restore.status).toBe(200);
  expect(restore.body).toMatchObject({ restored: 2, deleted: 1 });

  const objects = (await api.call('GET', `/api/frames/${frameId}/objects`, { token: annotator })).body.items;
  expect(objects.map((o: { id: string; class_name: string }) => [o.id, o.class_name]).sort()).toEqual(
    [
      [car.id, 'car'],
      [road.id, 'road'],
    ].sort(),
  );
  const restoredRoad = (await api.call('GET', `/api/objects/${road.id}`, { token: annotator })).body;
  expect(restoredRoad.mask_polygons).toEqual([[0, 200, 640, 200, 640, 360]]);
  // Versions move past every version a client could hold.
  expect(restoredRoad.version).toBe(3);
  expect((await api.call('GET', `/api/objects/${car.id}`, { token: annotator })).body.version).toBe(3);
  // No blob outlives its object: the extra object's and the replaced masks are gone.
  const keys = await maskKeys(api.deps);
  expect(keys.filter((k) => k.includes(extra.id))).toEqual([]);
  expect(keys.filter((k) => k.includes(road.id))).toEqual([`objects/${road.id}/v3.json`]);

  // The state before the restore was saved automatically; restoring it undoes the restore.
  const list = (await api.call('GET', `/api/frames/${frameId}/checkpoints`, { token: annotator })).body.items;
  expect(list.map((c: { name: string }) => c.name)).toEqual(['before restore of first pass', 'first pass']);
  const undo = await api.call('POST', `/api/checkpoints/${restore.body.undo_checkpoint_id}/restore`, {
    token: reviewer,
  });
  expect(undo.status).toBe(200);
  const afterUndo = (await api.call('GET', `/api/frames/${frameId}/objects`, { token: annotator })).body
    .items;
  expect(afterUndo.map((o: { id: string }) => o.id).sort()).toEqual([road.id, extra.id].sort());

  // History shows every step of the car.
  const history = (await api.call('GET', `/api/objects/${car.id}/history`, { token: annotator })).body;
  expect(history.events.map((e: { action: string }) => e.action)).toEqual([
    'object.created',
    'relabel',
    'object.reviewed',
    'object.deleted',
    'object.restored',
    'object.deleted',
  ]);
});

it('reads and deletes a checkpoint, answering 404 after', async () => {
  const cp = (
    await api.call('POST', `/api/frames/${frameId}/checkpoints`, {
      token: annotator,
      body: { name: 'to delete', note: 'temporary' },
    })
  ).body;
  const read = await api.call('GET', `/api/checkpoints/${cp.id}`, { token: annotator });
  expect(read.status).toBe(200);
  expect(read.body.objects.length).toBe(cp.object_count);
  expect((await api.call('DELETE', `/api/checkpoints/${cp.id}`, { token: reviewer })).status).toBe(200);
  expect((await api.call('GET', `/api/checkpoints/${cp.id}`, { token: annotator })).status).toBe(404);
  expect((await api.call('POST', `/api/checkpoints/${cp.id}/restore`, { token: reviewer })).status).toBe(404);
  const audit = await api.deps.db.auditLog.findMany({
    where: { subjectType: 'checkpoint', subjectId: cp.id },
    orderBy: { id: 'asc' },
  });
  expect(audit.map((a) => a.action)).toEqual(['checkpoint.saved', 'checkpoint.deleted']);
});

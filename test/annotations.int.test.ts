import sharp from 'sharp';
import { createFrame, maskKeys, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** Objects of every shape against the real PostgreSQL and MinIO (docs/annotations.md). */

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
  // A real database failure on demand: objects whose attrs carry `fail_write` cannot be written.
  await api.deps.db.$executeRawUnsafe(`
    CREATE FUNCTION fail_marked() RETURNS trigger AS $$
    BEGIN IF NEW.attrs ? 'fail_write' OR (TG_OP = 'UPDATE' AND OLD.attrs ? 'fail_update') THEN RAISE EXCEPTION 'marked to fail'; END IF; RETURN NEW; END $$ LANGUAGE plpgsql`);
  await api.deps.db.$executeRawUnsafe(
    `CREATE TRIGGER fail_marked BEFORE INSERT OR UPDATE ON objects FOR EACH ROW EXECUTE FUNCTION fail_marked()`,
  );
});
afterAll(async () => {
  if (api) await removeTestBlobs(api.deps);
  await api?.close();
  await db?.drop();
});

const create = (body: Record<string, unknown>, token = reviewer, frame = frameId) =>
  api.call('POST', `/api/frames/${frame}/objects`, { token, body });

describe('creating objects', () => {
  it('creates a plain box with the spec defaults', async () => {
    const res = await create({ class_name: 'car', bbox: [10, 20, 110, 80] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      frame_id: frameId,
      bbox: [10, 20, 110, 80],
      rot_deg: 0,
      rbox: null,
      class_name: 'car',
      conf: null,
      attrs: {},
      source: 'human',
      state: 'accepted',
      version: 1,
      mask_uri: null,
      clipped: false,
    });
    const audit = await api.deps.db.auditLog.findFirst({
      where: { subjectType: 'object', subjectId: res.body.id, action: 'object.created' },
    });
    expect(audit?.actorId).toBeTruthy();
  });

  it('stores every shape: rotated box, mask blob, polylines, keypoints, cuboid', async () => {
    const res = await create({
      class_name: 'person',
      bbox: [300, 100, 340, 200],
      rot_deg: 30,
      mask_polygons: [[300, 100, 340, 100, 340, 200, 300, 200]],
      polyline: [[290, 210, 350, 215, 360, 220]],
      keypoints: { head: [320, 110, 2], left_foot: [310, 195] },
      cuboid_3d: { center: [1, 2, 10], dims: [0.6, 0.5, 1.8], yaw: 0.3 },
      attrs: { occluded: 'partly' },
    });
    expect(res.status).toBe(201);
    const o = res.body;
    expect(o.rbox).toEqual([300, 100, 340, 200]);
    expect(o.rot_deg).toBe(30);
    // bbox encloses the rotated box, the mask, the polyline and the keypoints.
    expect(o.bbox[0]).toBeLessThanOrEqual(290);
    expect(o.bbox[2]).toBeGreaterThanOrEqual(360);
    expect(o.bbox[3]).toBeGreaterThanOrEqual(220);
    expect(o.mask_uri).toMatch(new RegExp(`^s3://masks/objects/${o.id}/v1\\.json$`));
    expect(o.cuboid_3d).toEqual({ center: [1, 2, 10], dims: [0.6, 0.5, 1.8], yaw: 0.3, pitch: 0, roll: 0 });
    expect(await maskKeys(api.deps, `objects/${o.id}/`)).toEqual([`objects/${o.id}/v1.json`]);

    const got = await api.call('GET', `/api/objects/${o.id}`, { token: annotator });
    expect(got.status).toBe(200);
    expect(got.body.mask_polygons).toEqual([[300, 100, 340, 100, 340, 200, 300, 200]]);
    expect(got.body.polyline).toEqual([[290, 210, 350, 215, 360, 220]]);
    expect(got.body.keypoints).toEqual({ head: [320, 110, 2], left_foot: [310, 195] });
  });

  it('clips a box crossing the frame edge and a mask ring to the frame', async () => {
    const res = await create({
      class_name: 'bus',
      bbox: [600, 300, 700, 400],
      mask_polygons: [[600, 300, 700, 300, 700, 400, 600, 400]],
    });
    expect(res.status).toBe(201);
    expect(res.body.bbox).toEqual([600, 300, 640, 360]);
    expect(res.body.clipped).toBe(true);
    const got = await api.call('GET', `/api/objects/${res.body.id}`, { token: reviewer });
    expect(got.body.mask_polygons).toEqual([[600, 360, 600, 300, 640, 300, 640, 360]]);
  });

  it("clamps the requested state by the caller's role", async () => {
    const a = await create({ class_name: 'car', bbox: [1, 1, 5, 5] }, annotator);
    expect(a.body).toMatchObject({ state: 'submitted', state_requested: 'accepted' });
    const r = await create({ class_name: 'car', bbox: [1, 1, 5, 5], state: 'rejected' }, reviewer);
    expect(r.body.state).toBe('rejected');
    const auto = await create({ class_name: 'car', bbox: [1, 1, 5, 5], state: 'auto_accept' }, reviewer);
    expect(auto.body.state).toBe('review');
    const open = await create({ class_name: 'car', bbox: [1, 1, 5, 5], state: 'annotate' }, annotator);
    expect(open.body.state).toBe('annotate');
  });

  it('answers 400 for a state outside the allowed list, and writes nothing', async () => {
    const before = await api.deps.db.annoObject.count();
    const res = await create({
      class_name: 'car',
      bbox: [1, 1, 5, 5],
      state: 'approved',
      mask_polygons: [[1, 1, 4, 1, 4, 4]],
    });
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(res.body.errors).toEqual([{ field: 'body.state', message: 'not an allowed state' }]);
    expect(await api.deps.db.annoObject.count()).toBe(before);
  });

  it.each([
    [{ class_name: 'car', bbox: [5, 5, 1, 1] }, 'body.bbox'],
    [{ class_name: 'car', bbox: [700, 400, 800, 500] }, 'body.bbox'],
    [{ class_name: 'car', bbox: [1, 1, 5] }, 'body.bbox'],
    [{ class_name: 'car', bbox: [1, 1, 5, 5], mask_polygons: [[1, 1, 2, 2]] }, 'body.mask_polygons.0'],
    [{ class_name: 'car', bbox: [1, 1, 5, 5], polyline: [[1, 1]] }, 'body.polyline.0'],
    [{ class_name: 'car', bbox: [1, 1, 5, 5], keypoints: { nose: [1000, 1] } }, 'body.keypoints.nose'],
    [
      { class_name: 'car', bbox: [1, 1, 5, 5], cuboid_3d: { center: [1, 2], dims: [1, 1, 1] } },
      'body.cuboid_3d.center',
    ],
    [{ class_name: 'no_such_class', bbox: [1, 1, 5, 5] }, 'body.class_name'],
    [{ class_name: 'car', bbox: [1, 1, 5, 5], colour: 'red' }, 'body.colour'],
  ])('refuses bad geometry or fields with 422 naming the field (%#)', async (body, field) => {
    const res = await create(body);
    expect(res.status).toBe(422);
    expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
  });

  it('refuses a non-finite number that JSON smuggles in as 1e999', async () => {
    const res = await api.call('POST', `/api/frames/${frameId}/objects`, {
      token: reviewer,
      rawBody: '{"class_name":"car","bbox":[1,1,5,1e999]}',
    });
    expect(res.status).toBe(422);
  });

  it('answers 404 for an unknown frame and 422 for a malformed frame id', async () => {
    expect(
      (
        await create(
          { class_name: 'car', bbox: [1, 1, 5, 5] },
          reviewer,
          '00000000-0000-4000-8000-000000000000',
        )
      ).status,
    ).toBe(404);
    expect((await create({ class_name: 'car', bbox: [1, 1, 5, 5] }, reviewer, 'x')).status).toBe(422);
  });

  it('makes a retry with the same idem_key return the first object, also when retries race', async () => {
    const body = {
      class_name: 'truck',
      bbox: [50, 50, 90, 90],
      idem_key: 'retry-1',
      mask_polygons: [[50, 50, 90, 50, 90, 90]],
    };
    const keysBefore = new Set(await maskKeys(api.deps));
    const results = await Promise.all([create(body), create(body), create(body), create(body)]);
    expect(results.map((r) => r.status)).toEqual([201, 201, 201, 201]);
    expect(new Set(results.map((r) => r.body.id)).size).toBe(1);
    expect(await api.deps.db.annoObject.count({ where: { idemKey: 'retry-1' } })).toBe(1);
    // The losers' blobs were removed: the only new blob is the winner's mask.
    const id = results[0]!.body.id;
    expect((await maskKeys(api.deps)).filter((k) => !keysBefore.has(k))).toEqual([`objects/${id}/v1.json`]);
    const again = await create(body);
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const elsewhere = (await createFrame(api.deps)).frame.id;
    expect((await create(body, reviewer, elsewhere)).status).toBe(409);
  });

  it('removes a just-written mask blob when the database write fails', async () => {
    const before = await maskKeys(api.deps);
    const res = await create({
      class_name: 'car',
      bbox: [1, 1, 50, 50],
      attrs: { fail_write: true },
      mask_polygons: [[1, 1, 40, 1, 40, 40]],
    });
    expect(res.status).toBe(500);
    expect(await maskKeys(api.deps)).toEqual(before);
  });
});

describe('listing, masks, deletion', () => {
  it("lists a frame's objects of every shape", async () => {
    const f = (await createFrame(api.deps)).frame.id;
    await create({ class_name: 'car', bbox: [1, 1, 9, 9] }, reviewer, f);
    await create(
      { class_name: 'lane_marking', bbox: [0, 300, 640, 310], polyline: [[0, 305, 640, 305]] },
      reviewer,
      f,
    );
    await create(
      { class_name: 'road', bbox: [0, 200, 640, 360], mask_polygons: [[0, 200, 640, 200, 640, 360, 0, 360]] },
      reviewer,
      f,
    );
    const res = await api.call('GET', `/api/frames/${f}/objects`, { token: annotator });
    expect(res.status).toBe(200);
    expect(res.body.count).toBe(3);
    expect(res.body.items.map((o: { class_name: string }) => o.class_name)).toEqual([
      'car',
      'lane_marking',
      'road',
    ]);
    expect(res.body.items[1].polyline).toEqual([[0, 305, 640, 305]]);
    expect(res.body.items[2].mask_uri).toMatch(/^s3:\/\/masks\//);
    // The list is serialised by PostgreSQL; each item must equal what GET /api/objects/{id} shows.
    for (const item of res.body.items) {
      const { mask_polygons: _, ...one } = (
        await api.call('GET', `/api/objects/${item.id}`, { token: annotator })
      ).body;
      expect(item).toEqual(one);
    }
    expect(
      (
        await api.call('GET', '/api/frames/00000000-0000-4000-8000-000000000000/objects', {
          token: annotator,
        })
      ).status,
    ).toBe(404);
  });

  it('replaces a mask under a new version, removes the old blob, and checks expected_version', async () => {
    const o = (
      await create({
        class_name: 'road',
        bbox: [0, 200, 100, 300],
        mask_polygons: [[0, 200, 100, 200, 100, 300]],
      })
    ).body;
    const stale = await api.call('PUT', `/api/objects/${o.id}/mask`, {
      token: annotator,
      body: { polygons: [[0, 0, 10, 0, 10, 10]], expected_version: 7 },
    });
    expect(stale.status).toBe(409);
    const res = await api.call('PUT', `/api/objects/${o.id}/mask`, {
      token: annotator,
      body: { polygons: [[10, 10, 60, 10, 60, 50, 10, 50]], expected_version: 1 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      version: 2,
      source: 'human',
      bbox: [10, 10, 60, 50],
      mask_polygons: [[10, 10, 60, 10, 60, 50, 10, 50]],
    });
    expect(await maskKeys(api.deps, `objects/${o.id}/`)).toEqual([`objects/${o.id}/v2.json`]);
    const review = await api.deps.db.review.findFirst({ where: { objectId: o.id, action: 'mask' } });
    expect(review?.before).toMatchObject({ source: 'human', version: 1 });
  });

  it('keeps the old mask when the database refuses the update, leaving no new blob', async () => {
    const o = (
      await create({
        class_name: 'road',
        bbox: [0, 200, 100, 300],
        attrs: { fail_update: true },
        mask_polygons: [[0, 200, 100, 200, 100, 300]],
      })
    ).body;
    const res = await api.call('PUT', `/api/objects/${o.id}/mask`, {
      token: annotator,
      body: { polygons: [[10, 10, 60, 10, 60, 50]] },
    });
    expect(res.status).toBe(500);
    expect(await maskKeys(api.deps, `objects/${o.id}/`)).toEqual([`objects/${o.id}/v1.json`]);
    expect((await api.call('GET', `/api/objects/${o.id}`, { token: annotator })).body.mask_polygons).toEqual([
      [0, 200, 100, 200, 100, 300],
    ]);
  });

  it('deletes an object with its mask blob; history outlives it', async () => {
    const o = (
      await create({
        class_name: 'road',
        bbox: [0, 200, 100, 300],
        mask_polygons: [[0, 200, 100, 200, 100, 300]],
      })
    ).body;
    expect((await api.call('DELETE', `/api/objects/${o.id}`, { token: annotator })).status).toBe(403);
    const res = await api.call('DELETE', `/api/objects/${o.id}`, { token: reviewer });
    expect(res.status).toBe(200);
    expect(await maskKeys(api.deps, `objects/${o.id}/`)).toEqual([]);
    expect((await api.call('GET', `/api/objects/${o.id}`, { token: reviewer })).status).toBe(404);
    expect((await api.call('DELETE', `/api/objects/${o.id}`, { token: reviewer })).status).toBe(404);
    const history = await api.call('GET', `/api/objects/${o.id}/history`, { token: annotator });
    expect(history.status).toBe(200);
    expect(history.body.exists).toBe(false);
    expect(history.body.events.map((e: { action: string }) => e.action)).toEqual([
      'object.created',
      'object.deleted',
    ]);
  });
});

describe('crops', () => {
  it('crops an object from the frame image, padded', async () => {
    const o = (await create({ class_name: 'traffic_sign', bbox: [100, 100, 200, 200] })).body;
    const res = await fetch(`${api.url}/api/objects/${o.id}/crop?pad=0`, {
      headers: { authorization: `Bearer ${annotator}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/jpeg');
    const img = sharp(Buffer.from(await res.arrayBuffer()));
    expect(await img.metadata()).toMatchObject({ width: 100, height: 100 });
    // The white square of the test frame fills the crop.
    const { channels } = await img.stats();
    expect(channels[0]!.mean).toBeGreaterThan(240);
    const padded = await fetch(`${api.url}/api/objects/${o.id}/crop`, {
      headers: { authorization: `Bearer ${annotator}` },
    });
    expect(await sharp(Buffer.from(await padded.arrayBuffer())).metadata()).toMatchObject({
      width: 130,
      height: 130,
    });
  });

  it('crops from the new redacted copy once there is one, not from the frame decoded before', async () => {
    const o = (await create({ class_name: 'traffic_sign', bbox: [100, 100, 200, 200] })).body;
    const mean = async () => {
      const res = await fetch(`${api.url}/api/objects/${o.id}/crop?pad=0`, {
        headers: { authorization: `Bearer ${annotator}` },
      });
      return (await sharp(Buffer.from(await res.arrayBuffer())).stats()).channels[0]!.mean;
    };
    expect(await mean()).toBeGreaterThan(240); // the white square, decoded and kept
    // The PII pass writes a redacted copy with the square blacked out.
    const frame = await api.deps.db.frame.findUniqueOrThrow({ where: { id: o.frame_id } });
    const black = await sharp({
      create: { width: frame.width, height: frame.height, channels: 3, background: { r: 0, g: 0, b: 0 } },
    })
      .jpeg()
      .toBuffer();
    const bucket = api.deps.storage.bucket('frames');
    const key = `test/redacted-${frame.id}.jpg`;
    await api.deps.storage.client.putObject(bucket, key, black, black.length);
    await api.deps.db.frame.update({
      where: { id: frame.id },
      data: { redactedUri: `s3://${bucket}/${key}` },
    });
    try {
      expect(await mean()).toBeLessThan(10);
    } finally {
      await api.deps.db.frame.update({ where: { id: frame.id }, data: { redactedUri: null } });
      await api.deps.storage.client.removeObject(bucket, key);
    }
  });

  it('builds a crop sheet with the CropSheetIn defaults', async () => {
    const ids = [];
    for (let i = 0; i < 5; i++)
      ids.push((await create({ class_name: 'car', bbox: [10 + i * 20, 10, 30 + i * 20, 40] })).body.id);
    const res = await fetch(`${api.url}/api/objects/crops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${annotator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ object_ids: ids }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-crop-grid')).toBe('3x2');
    expect(await sharp(Buffer.from(await res.arrayBuffer())).metadata()).toMatchObject({
      width: 384,
      height: 256,
    });
    const two = await fetch(`${api.url}/api/objects/crops`, {
      method: 'POST',
      headers: { authorization: `Bearer ${annotator}`, 'content-type': 'application/json' },
      body: JSON.stringify({ object_ids: ids, cols: 5, cell: 64 }),
    });
    expect(await sharp(Buffer.from(await two.arrayBuffer())).metadata()).toMatchObject({
      width: 320,
      height: 64,
    });
    const missing = await api.call('POST', '/api/objects/crops', {
      token: annotator,
      body: { object_ids: [ids[0], '00000000-0000-4000-8000-000000000000'] },
    });
    expect(missing.status).toBe(404);
    expect(missing.body.missing).toEqual(['00000000-0000-4000-8000-000000000000']);
  });
});

describe('no review bypass', () => {
  it('sends an accepted object back to review when an annotator replaces its mask', async () => {
    const made = await create({ class_name: 'car', bbox: [10, 10, 60, 60], state: 'accepted' });
    expect(made.body.state).toBe('accepted');
    const byReviewer = await api.call('PUT', `/api/objects/${made.body.id}/mask`, {
      token: reviewer,
      body: { polygons: [[10, 10, 70, 10, 70, 70, 10, 70]], expected_version: 1 },
    });
    expect(byReviewer.status).toBe(200);
    expect(byReviewer.body).toMatchObject({ state: 'accepted', bbox: [10, 10, 70, 70], version: 2 });

    const byAnnotator = await api.call('PUT', `/api/objects/${made.body.id}/mask`, {
      token: annotator,
      body: { polygons: [[20, 20, 200, 20, 200, 200, 20, 200]], expected_version: 2 },
    });
    expect(byAnnotator.status).toBe(200);
    expect(byAnnotator.body).toMatchObject({ state: 'submitted', bbox: [20, 20, 200, 200], version: 3 });
    const history = await api.call('GET', `/api/objects/${made.body.id}/history`, { token: reviewer });
    expect(history.body.events.at(-1)).toMatchObject({ action: 'object.mask.replaced' });
  });
});

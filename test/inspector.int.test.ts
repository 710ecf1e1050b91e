import { startTestApi, createUserWithToken, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { createSessionFixture, type SessionFixture } from '../testkit/session-fixtures';
import { testConfig } from '../testkit/stack';

let db: TestDatabase;
let api: TestApi;
let annotator: { userId: string; token: string };
let otherAnnotator: { userId: string; token: string };
let reviewer: string;
let drive: SessionFixture;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = await createUserWithToken(api.deps, 'annotator');
  otherAnnotator = await createUserWithToken(api.deps, 'annotator');
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  // Frames at 0, 333.3, 666.7, 1000, 1333.3 ms.
  drive = await createSessionFixture(api.deps, { frames: 5, storeImages: false });
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const get = (path: string, token = annotator.token) => api.call('GET', path, { token });

describe('frame-at and annotations-at', () => {
  const at = (q: string) => get(`/api/inspector/sessions/${drive.session.id}/frame-at?${q}`);

  it('finds the nearest frame, or the last before / first after t', async () => {
    expect((await at('t=400')).body).toMatchObject({ index: 1, delta_ms: expect.closeTo(333.333 - 400, 2) });
    expect((await at('t=600')).body.index).toBe(2);
    expect((await at('t=600&mode=before')).body.index).toBe(1);
    expect((await at('t=400&mode=after')).body.index).toBe(2);
    expect((await at('t=1000')).body).toMatchObject({ index: 3, delta_ms: 0 });
    expect((await at('t=-50')).body.index).toBe(0);
    expect((await at('t=99999')).body.index).toBe(4);
    const past = await at('t=99999&mode=after');
    expect(past.status).toBe(404);
    expect(past.body.detail).toMatch(/no frame after 99999 ms/);
  });

  it('refuses a missing or malformed t, and unknown sessions', async () => {
    for (const q of ['', 't=', 't=soon', 't=Infinity', 't=1&mode=sideways']) {
      const res = await at(q);
      expect({ q, status: res.status }).toEqual({ q, status: 422 });
    }
    expect(
      (await get('/api/inspector/sessions/00000000-0000-4000-8000-000000000000/frame-at?t=1')).status,
    ).toBe(404);
    expect((await get('/api/inspector/sessions/abc/frame-at?t=1')).status).toBe(422);
  });

  it("returns the frame's annotation objects", async () => {
    const cls = await api.deps.db.ontologyClass.create({
      data: { name: `inspector-test-car-${Date.now()}`, l0: 'object', l1: 'vehicle' },
    });
    const frame = drive.frames[2]!;
    await api.deps.db.annoObject.create({
      data: {
        frameId: frame.id,
        bbox: [1, 2, 30, 40],
        classId: cls.id,
        source: 'human',
        state: 'accepted',
        conf: 0.9,
      },
    });
    await api.deps.db.annoObject.create({
      data: {
        frameId: drive.frames[3]!.id,
        bbox: [5, 5, 9, 9],
        classId: cls.id,
        source: 'fused',
        state: 'review',
      },
    });
    const res = await get(`/api/inspector/sessions/${drive.session.id}/annotations-at?t=700`);
    expect(res.status).toBe(200);
    expect(res.body.frame.id).toBe(frame.id);
    expect(res.body.objects).toEqual([
      expect.objectContaining({
        frame_id: frame.id,
        bbox: [1, 2, 30, 40],
        class_id: cls.id,
        state: 'accepted',
        source: 'human',
      }),
    ]);
  });
});

describe('inspector sessions and events', () => {
  it('lists sessions with their gate verdict, filtered by quarantine', async () => {
    const q = await createSessionFixture(api.deps, {
      frames: 1,
      storeImages: false,
      session: { quarantined: true, vehicleId: 'rig-q' },
    });
    const all = (await get('/api/inspector/sessions')).body.items;
    expect(all.map((s: any) => s.id)).toEqual(expect.arrayContaining([drive.session.id, q.session.id]));
    expect(all[0].gate).toMatchObject({ verdict: 'uninspected', indexer_version: 'inspector@1' });
    const onlyQ = (await get('/api/inspector/sessions?quarantined=true')).body.items;
    expect(onlyQ.map((s: any) => s.id)).toEqual([q.session.id]);
    expect((await get('/api/inspector/sessions?vehicle_id=rig-q')).body.items).toHaveLength(1);
    expect((await get('/api/inspector/sessions?limit=9999')).status).toBe(422);
  });

  it("shows the session's event log, newest first", async () => {
    const rec = await api.call('POST', `/api/inspector/sessions/${drive.session.id}/health`, {
      token: reviewer,
      body: { indexer_version: 'calib-checker@1', passed: false, score: 0.2 },
    });
    expect(rec.status).toBe(201);
    const events = (await get(`/api/inspector/sessions/${drive.session.id}/events`)).body.items;
    expect(events[0]).toMatchObject({
      action: 'session.health.recorded',
      detail: { indexer_version: 'calib-checker@1', passed: false },
    });
    expect((await get(`/api/inspector/sessions/${drive.session.id}/events?limit=0`)).status).toBe(422);
  });

  it('validates health rows of other writers and loses nothing on a bad one', async () => {
    const url = `/api/inspector/sessions/${drive.session.id}/health`;
    const before = await api.deps.db.sessionHealth.count();
    for (const body of [
      { indexer_version: 'no-version', passed: true, score: 1 },
      { indexer_version: 'x@1', passed: true, score: 1.5 },
      { indexer_version: 'x@1', passed: 'yes', score: 1 },
      { indexer_version: 'x@1', passed: true, score: 1, extra: 1 },
    ]) {
      expect((await api.call('POST', url, { token: reviewer, body })).status).toBe(422);
    }
    expect(
      (
        await api.call('POST', url, {
          token: annotator.token,
          body: { indexer_version: 'x@1', passed: true, score: 1 },
        })
      ).status,
    ).toBe(403);
    expect(
      (
        await api.call('POST', '/api/inspector/sessions/00000000-0000-4000-8000-000000000000/health', {
          token: reviewer,
          body: { indexer_version: 'x@1', passed: true, score: 1 },
        })
      ).status,
    ).toBe(404);
    expect(await api.deps.db.sessionHealth.count()).toBe(before);
  });
});

describe('layouts', () => {
  it('are stored per user: create, list own, refuse duplicates, delete only own', async () => {
    const created = await api.call('POST', '/api/inspector/layouts', {
      token: annotator.token,
      body: { name: 'front cam + map', layout: { panels: ['image', 'map'], zoom: 2 } },
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: 'front cam + map',
      layout: { panels: ['image', 'map'], zoom: 2 },
    });
    expect(
      (
        await api.call('POST', '/api/inspector/layouts', {
          token: annotator.token,
          body: { name: 'front cam + map', layout: {} },
        })
      ).status,
    ).toBe(409);
    // Another user may use the same name.
    expect(
      (
        await api.call('POST', '/api/inspector/layouts', {
          token: otherAnnotator.token,
          body: { name: 'front cam + map', layout: {} },
        })
      ).status,
    ).toBe(201);

    expect((await get('/api/inspector/layouts')).body.items.map((l: any) => l.id)).toEqual([created.body.id]);
    expect(
      (await api.call('DELETE', `/api/inspector/layouts/${created.body.id}`, { token: otherAnnotator.token }))
        .status,
    ).toBe(404);
    const del = await api.call('DELETE', `/api/inspector/layouts/${created.body.id}`, {
      token: annotator.token,
    });
    expect(del.status).toBe(200);
    expect((await get('/api/inspector/layouts')).body.items).toEqual([]);
    expect(
      (await api.call('DELETE', `/api/inspector/layouts/${created.body.id}`, { token: annotator.token }))
        .status,
    ).toBe(404);
    expect(
      await api.deps.db.auditLog.count({
        where: { subjectType: 'inspector_layout', subjectId: created.body.id },
      }),
    ).toBe(2);
  });

  it('refuses malformed and oversized layouts', async () => {
    for (const body of [
      { name: '', layout: {} },
      { name: 'x', layout: [1, 2] },
      { name: 'x' },
      { name: 'big', layout: { blob: 'x'.repeat(70_000) } },
    ]) {
      expect(
        (await api.call('POST', '/api/inspector/layouts', { token: annotator.token, body })).status,
      ).toBe(422);
    }
    expect(
      (await api.call('DELETE', '/api/inspector/layouts/not-a-uuid', { token: annotator.token })).status,
    ).toBe(422);
  });
});

describe('recordings: mcap-url, viewer-link, cloud', () => {
  async function sessionWithSource(sourceUri: string | null, sourceKind = 'bag') {
    return api.deps.db.session.create({ data: { name: 'recording', sourceKind, sourceUri } });
  }

  it('signs an expiring MinIO URL of a stored MCAP that fetches the recording', async () => {
    const bytes = Buffer.from('\x89MCAP0\r\n fake body for signing');
    const key = `test/${Date.now()}/drive.mcap`;
    await api.deps.storage.client.putObject(api.deps.storage.bucket('uploads'), key, bytes);
    const s = await sessionWithSource(`s3://${api.deps.storage.bucket('uploads')}/${key}`);

    const res = await get(`/api/inspector/sessions/${s.id}/mcap-url`, reviewer);
    expect(res.status).toBe(200);
    expect(res.body.url).toMatch(/X-Amz-Signature=/);
    expect(Date.parse(res.body.expires_at) - Date.now()).toBeGreaterThan(800_000);
    expect(Buffer.from(await (await fetch(res.body.url)).arrayBuffer()).equals(bytes)).toBe(true);
    // A tampered signature is refused by MinIO itself.
    expect(
      (await fetch(res.body.url.replace(/X-Amz-Signature=[0-9a-f]{4}/, 'X-Amz-Signature=0000'))).status,
    ).toBe(403);

    const viewer = await get(`/api/inspector/sessions/${s.id}/viewer-link`, reviewer);
    expect(viewer.status).toBe(200);
    const link = new URL(viewer.body.url);
    expect(link.origin + link.pathname).toBe('https://app.foxglove.dev/~/view');
    expect(link.searchParams.get('ds')).toBe('remote-file');
    expect((await fetch(link.searchParams.get('ds.url')!)).status).toBe(200);

    expect((await get(`/api/inspector/sessions/${s.id}/mcap-url`)).status).toBe(403); // annotators get no raw recordings
  });

  it('opens a stored ROS 1 bag in the viewer but refuses it as an MCAP', async () => {
    const key = `test/${Date.now()}/drive.bag`;
    await api.deps.storage.client.putObject(
      api.deps.storage.bucket('uploads'),
      key,
      Buffer.from('#ROSBAG V2.0\n'),
    );
    const s = await sessionWithSource(key); // a bare key: the uploads bucket
    expect((await get(`/api/inspector/sessions/${s.id}/viewer-link`, reviewer)).status).toBe(200);
    const mcap = await get(`/api/inspector/sessions/${s.id}/mcap-url`, reviewer);
    expect(mcap.status).toBe(422);
    expect(mcap.body.detail).toMatch(/not a mcap file/);
  });

  it('refuses by name when there is no recording to sign', async () => {
    const video = await sessionWithSource('s3://uploads/test/drive.mp4', 'video');
    const local = await sessionWithSource('/data/drives/2026-11-01', 'frames');
    const none = await sessionWithSource(null, 'frames');
    for (const [s, pattern] of [
      [video, /not a mcap file/],
      [local, /server-side path/],
      [none, /no recorded source/],
    ] as const) {
      const res = await get(`/api/inspector/sessions/${s.id}/mcap-url`, reviewer);
      expect(res.status).toBe(422);
      expect(res.body.detail).toMatch(pattern);
    }
    const gone = await sessionWithSource('s3://uploads/test/vanished.mcap');
    const res = await get(`/api/inspector/sessions/${gone.id}/mcap-url`, reviewer);
    expect(res.status).toBe(404);
    expect(res.body.detail).toMatch(/no longer in object storage/);
  });

  it('refuses the LiDAR cloud by name', async () => {
    const res = await get(`/api/inspector/sessions/${drive.session.id}/cloud`);
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/has no LiDAR point cloud/);
    expect((await get('/api/inspector/sessions/00000000-0000-4000-8000-000000000000/cloud')).status).toBe(
      404,
    );
  });
});

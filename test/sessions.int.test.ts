import { startTestApi, createUserWithToken, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { createSessionFixture } from '../testkit/session-fixtures';
import { testConfig } from '../testkit/stack';

let db: TestDatabase;
let api: TestApi;
let token: string;

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  token = (await createUserWithToken(api.deps, 'annotator')).token;
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const get = (path: string) => api.call('GET', path, { token });

describe('GET /api/sessions/page', () => {
  it('pages through every session exactly once while new sessions are inserted', async () => {
    // 12 sessions made in one statement share one created_at (the transaction's), so only the id orders them;
    // 6 more sit in the same millisecond, apart only in microseconds.
    await api.deps.db.session.createMany({
      data: Array.from({ length: 12 }, (_, i) => ({ name: `same-instant ${i}`, sourceKind: 'video' })),
    });
    for (let i = 0; i < 6; i++) {
      await api.deps.db.$executeRaw`INSERT INTO sessions (id, name, source_kind, updated_at, created_at)
        VALUES (gen_random_uuid(), ${`microseconds ${i}`}, 'frames', now(), ${`2026-01-01T00:00:00.000${(i * 150 + 100).toString().padStart(3, '0')}Z`}::timestamptz)`;
    }
    for (let i = 0; i < 7; i++)
      await api.deps.db.session.create({ data: { name: `plain ${i}`, sourceKind: 'bag' } });
    const before = new Set((await api.deps.db.session.findMany({ select: { id: true } })).map((s) => s.id));
    expect(before.size).toBe(25);

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const res: any = await get(`/api/sessions/page?limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(res.status).toBe(200);
      expect(res.body.items.length).toBeLessThanOrEqual(4);
      seen.push(...res.body.items.map((s: any) => s.id));
      cursor = res.body.next_cursor;
      // Someone keeps ingesting while we page.
      await api.deps.db.session.create({
        data: { name: `arrived during paging ${pages}`, sourceKind: 'video' },
      });
      pages++;
    } while (cursor && pages < 50);

    expect(new Set(seen).size).toBe(seen.length); // no duplicates
    for (const id of before) expect(seen).toContain(id); // no gaps
    expect(pages).toBe(7); // 25 rows / 4 per page
  });

  it('orders newest first and applies filters across pages', async () => {
    const first = await get('/api/sessions/page?limit=3&source_kind=x');
    expect(first.status).toBe(422); // unknown filter named
    expect(first.body.errors[0].field).toBe('query.source_kind');

    const bags: any = await get('/api/sessions/page?limit=200');
    const created = bags.body.items.map((s: any) => Date.parse(s.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
    const quarantinedIds = bags.body.items.slice(0, 2).map((s: any) => s.id);
    await api.deps.db.session.updateMany({
      where: { id: { in: quarantinedIds } },
      data: { quarantined: true },
    });
    const q: any = await get('/api/sessions/page?quarantined=true&limit=1');
    expect(q.body.items).toHaveLength(1);
    const q2: any = await get(`/api/sessions/page?quarantined=true&limit=1&cursor=${q.body.next_cursor}`);
    expect([q.body.items[0].id, q2.body.items[0].id].sort()).toEqual([...quarantinedIds].sort());
    expect(q2.body.next_cursor).toBeNull();
  });

  it('refuses a bad cursor or limit with problem+json naming the field', async () => {
    for (const [query, field] of [
      ['cursor=garbage', 'query.cursor'],
      [`cursor=${Buffer.from('{"t":"yesterday","i":"x"}').toString('base64url')}`, 'query.cursor'],
      ['limit=201', 'query.limit'],
      ['limit=0', 'query.limit'],
      ['limit=ten', 'query.limit'],
      ['quarantined=maybe', 'query.quarantined'],
    ]) {
      const res = await get(`/api/sessions/page?${query}`);
      expect({ query, status: res.status }).toEqual({ query, status: 422 });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: any) => e.field)).toContain(field);
    }
  });
});

describe('session reads', () => {
  it('lists sessions with a bounded limit and says when there are more', async () => {
    const res = await get('/api/sessions?limit=5');
    expect(res.status).toBe(200);
    expect(res.body.items).toHaveLength(5);
    expect(res.body.has_more).toBe(true);
    expect(res.body.items[0]).toEqual(
      expect.objectContaining({
        id: expect.any(String),
        state: expect.any(String),
        quarantined: expect.any(Boolean),
        duplicate_count: 0,
        expected_sensors: [],
      }),
    );
    expect((await get('/api/sessions?limit=501')).status).toBe(422);
    expect((await api.call('GET', '/api/sessions')).status).toBe(401);
  });

  it('counts sessions by state', async () => {
    await api.deps.db.session.create({ data: { name: 'failed one', sourceKind: 'video', state: 'failed' } });
    const res = await get('/api/sessions/states');
    const total = await api.deps.db.session.count();
    expect(res.body.total).toBe(total);
    expect(res.body.states.reduce((s: number, x: any) => s + x.count, 0)).toBe(total);
    expect(res.body.states.find((s: any) => s.state === 'failed').count).toBe(1);
    expect(res.body.quarantined).toBe(await api.deps.db.session.count({ where: { quarantined: true } }));
  });

  it('serves the first frame and the stats of a session', async () => {
    const { session, frames } = await createSessionFixture(api.deps, {
      frames: 4,
      redacted: true,
      session: { duplicateCount: 3, rejectedCount: 1 },
    });
    await api.deps.db.piiAudit.create({
      data: { frameId: frames[0]!.id, nFaces: 2, nPlates: 1, regions: [] },
    });
    await api.deps.db.piiAudit.create({ data: { frameId: frames[1]!.id, nFaces: 1, regions: [] } });

    const first = await get(`/api/sessions/${session.id}/first-frame`);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      id: frames[0]!.id,
      index: 0,
      timestamp_ms: 0,
      redacted: true,
      image_url: `/api/frames/${frames[0]!.id}/image`,
    });

    const stats = await get(`/api/sessions/${session.id}/stats`);
    expect(stats.status).toBe(200);
    expect(stats.body).toMatchObject({
      frames: { count: 4, first_timestamp_ms: 0, last_timestamp_ms: 1000, duration_ms: 1000, redacted: 4 },
      ingest: { target_fps: 3, duplicate_count: 3, rejected_count: 1 },
      pii: { audited_frames: 2, faces: 3, plates: 1 },
      objects: { total: 0, by_state: {} },
      health: { verdict: 'uninspected', quarantined: false },
    });
  });

  it('answers unknown, malformed and frameless sessions with problem+json', async () => {
    const empty = await api.deps.db.session.create({
      data: { name: 'no frames yet', sourceKind: 'video', state: 'ingesting' },
    });
    const none = await get(`/api/sessions/${empty.id}/first-frame`);
    expect(none.status).toBe(404);
    expect(none.body.detail).toMatch(/no frames yet/);
    expect((await get(`/api/sessions/${empty.id}/stats`)).body.frames).toMatchObject({
      count: 0,
      duration_ms: null,
    });
    expect((await get('/api/sessions/00000000-0000-4000-8000-000000000000/stats')).status).toBe(404);
    const bad = await get("/api/sessions/1'%20OR%201=1/first-frame");
    expect(bad.status).toBe(422);
    expect(bad.body.errors).toEqual([{ field: 'path.session_id', message: 'must be a UUID' }]);
  });
});

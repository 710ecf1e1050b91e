import { randomUUID } from 'node:crypto';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/**
 * Threshold fits on the real database: verdicts from the control-verdict and review routes, the
 * fit per class and overall, activation (admin, one active), and the routing defaults it sets.
 *
 * Evidence, built so the answers are known: cars correct from conf 0.7 up (30, half judged by
 * control verdicts, half confirmed in review) and wrong at 0.5 (10 rejected) — at 0.7, 31/32 ≥ 0.9,
 * at 0.5, 31/42 < 0.9, so the car threshold is 0.7; buses at 0.9 with 20 of 26 confirmed and 6
 * relabelled to truck — 21/28 < 0.9 at every threshold, unreachable; 3 bicycles — insufficient.
 */
let db: TestDatabase;
let api: TestApi;
let annotator: string;
let reviewer: string;
let admin: string;
let sessionId: string;
let emptySessionId: string;
const ids: Record<'car' | 'carWrong' | 'bus' | 'bicycle', string[]> = {
  car: [],
  carWrong: [],
  bus: [],
  bicycle: [],
};

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  admin = (await createUserWithToken(api.deps, 'admin')).token;
  const prisma = api.deps.db;
  sessionId = (await prisma.session.create({ data: { name: 'fit', sourceKind: 'frames' } })).id;
  emptySessionId = (await prisma.session.create({ data: { name: 'no verdicts', sourceKind: 'frames' } })).id;
  const frame = await prisma.frame.create({
    data: { sessionId, index: 0, timestampMs: 0, width: 640, height: 360, uri: 's3://frames/none.jpg' },
  });
  const classId = async (name: string) =>
    (await prisma.ontologyClass.findUniqueOrThrow({ where: { name } })).id;
  const make = async (key: keyof typeof ids, className: string, confs: number[]) => {
    const cls = await classId(className);
    const rows = confs.map((conf) => ({
      id: randomUUID(),
      frameId: frame.id,
      bbox: [0, 0, 10, 10],
      classId: cls,
      conf,
      source: 'fused',
      state: 'review',
    }));
    await prisma.annoObject.createMany({ data: rows });
    ids[key] = rows.map((r) => r.id);
  };
  await make(
    'car',
    'car',
    Array.from({ length: 30 }, (_, i) => 0.7 + i * 0.01),
  );
  await make(
    'carWrong',
    'car',
    Array.from({ length: 10 }, () => 0.5),
  );
  await make(
    'bus',
    'bus',
    Array.from({ length: 26 }, () => 0.9),
  );
  await make('bicycle', 'bicycle', [0.95, 0.96, 0.97]);

  const review = async (id: string, body: Record<string, unknown>) => {
    const res = await api.call('POST', `/api/objects/${id}/review`, { token: reviewer, body });
    if (res.status !== 200) throw new Error(`review: ${res.status} ${JSON.stringify(res.body)}`);
  };
  // Half the good cars through control samples and their verdict route.
  const controlled = ids.car.slice(0, 15);
  const objects = await prisma.annoObject.findMany({ where: { id: { in: controlled } } });
  await prisma.controlSample.createMany({
    data: objects.map((o) => ({ objectId: o.id, sessionId, seed: 1, className: 'car', conf: o.conf })),
  });
  for (const sample of await prisma.controlSample.findMany()) {
    const res = await api.call('POST', `/api/govern/control/${sample.id}/verdict`, {
      token: reviewer,
      body: { verdict: 'correct' },
    });
    if (res.status !== 200) throw new Error(`verdict: ${res.status} ${JSON.stringify(res.body)}`);
  }
  // A controlled object reviewed later counts once, as its control.
  await review(controlled[0]!, { action: 'reject' });
  for (const id of ids.car.slice(15)) await review(id, { action: 'confirm' });
  for (const id of ids.carWrong) await review(id, { action: 'reject' });
  for (const [i, id] of ids.bus.entries())
    await review(id, i < 20 ? { action: 'accept' } : { action: 'relabel', class_name: 'truck' });
  for (const id of ids.bicycle) await review(id, { action: 'confirm' });
  // A second review judges a human object, not the machine's: it does not count.
  await review(ids.bicycle[0]!, { action: 'reject' });
}, 120_000);

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const fit = (token: string, body: Record<string, unknown> = {}) =>
  api.call('POST', '/api/fusion/thresholds/fit', { token, body: { target_precision: 0.9, ...body } });

describe('fitting', () => {
  it('fits each class from control verdicts and first reviews of machine objects', async () => {
    const res = await fit(reviewer);
    expect(res.status).toBe(201);
    expect(res.headers.get('location')).toBe(`/api/fusion/thresholds/${res.body.fit_id}`);
    expect(res.body).toMatchObject({
      target_precision: 0.9,
      min_samples: 25,
      active: false,
      evidence: { controls: 15, reviews: 15 + 10 + 26 + 3, judged: 69 },
    });
    expect(res.body.classes.car).toMatchObject({
      status: 'fitted',
      threshold: 0.7,
      judged: 40,
      correct: 30,
      at_threshold: { judged: 30, correct: 30 },
    });
    expect(res.body.classes.car.at_threshold.precision).toBeCloseTo(31 / 32);
    expect(res.body.classes.car.coverage).toBeCloseTo(30 / 40);
    expect(res.body.classes.bus).toMatchObject({
      status: 'unreachable',
      threshold: null,
      judged: 26,
      correct: 20,
    });
    expect(res.body.classes.bicycle).toMatchObject({ status: 'insufficient', judged: 3 });
    expect(res.body.global.judged).toBe(69);
    const again = await api.call('GET', `/api/fusion/thresholds/${res.body.fit_id}`, { token: annotator });
    expect(again.body).toEqual(res.body);
  });

  it('uses only the sessions named', async () => {
    const res = await fit(reviewer, { session_ids: [emptySessionId] });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      session_ids: [emptySessionId],
      evidence: { judged: 0 },
      global: { status: 'insufficient' },
      classes: {},
    });
  });

  it('refuses annotators, bad bodies and unknown fits', async () => {
    expect((await fit(annotator)).status).toBe(403);
    const bad = await fit(reviewer, { target_precision: 1.5, session_ids: ['nope'] });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toMatch(/target_precision/);
    expect(JSON.stringify(bad.body)).toMatch(/session_ids/);
    expect(
      (await api.call('GET', `/api/fusion/thresholds/${randomUUID()}`, { token: annotator })).status,
    ).toBe(404);
    expect((await api.call('GET', '/api/fusion/thresholds/nope', { token: annotator })).status).toBe(422);
  });
});

describe('activation', () => {
  it('makes one fit the routing default of new jobs (admin only), and routes by it', async () => {
    const first = (await fit(reviewer)).body;
    const second = (await fit(reviewer)).body;
    expect(
      (await api.call('POST', `/api/fusion/thresholds/${first.fit_id}/activate`, { token: reviewer })).status,
    ).toBe(403);
    const on = await api.call('POST', `/api/fusion/thresholds/${first.fit_id}/activate`, { token: admin });
    expect(on.status).toBe(200);
    expect(on.body).toMatchObject({
      active: true,
      routing_defaults: { class_thresholds: { car: 0.7, bus: null }, threshold_fit_id: first.fit_id },
    });
    expect(
      (await api.call('POST', `/api/fusion/thresholds/${second.fit_id}/activate`, { token: admin })).status,
    ).toBe(200);
    expect(await api.deps.db.thresholdFit.count({ where: { active: true } })).toBe(1);
    const list = await api.call('GET', '/api/fusion/thresholds', { token: annotator });
    expect(list.body.active.fit_id).toBe(second.fit_id);
    expect(list.body.routing_defaults.threshold_fit_id).toBe(second.fit_id);
    expect(list.body.items[0].fit_id).toBe(second.fit_id);
    expect(await api.deps.db.auditLog.count({ where: { action: 'fusion.thresholds.activated' } })).toBe(2);

    // The uncertainty view routes with it: a car at 0.75 now auto-accepts (0.75 ≥ 0.7), a bus at
    // 0.9 never does, so it is what the verifier would be asked about.
    const prisma = api.deps.db;
    const frame = await prisma.frame.findFirstOrThrow({ where: { sessionId } });
    const [car, bus] = await Promise.all(
      ['car', 'bus'].map((name) => prisma.ontologyClass.findUniqueOrThrow({ where: { name } })),
    );
    const fresh = await Promise.all([
      prisma.annoObject.create({
        data: {
          frameId: frame.id,
          bbox: [0, 0, 9, 9],
          classId: car!.id,
          conf: 0.75,
          source: 'fused',
          state: 'review',
        },
      }),
      prisma.annoObject.create({
        data: {
          frameId: frame.id,
          bbox: [0, 0, 9, 9],
          classId: bus!.id,
          conf: 0.9,
          source: 'fused',
          state: 'review',
        },
      }),
    ]);
    await prisma.provenance.createMany({
      data: fresh.map((o) => ({
        objectId: o.id,
        paths: ['closed_set'],
        agreement: 1,
        entropy: 0,
        reasonerTrace: { paths_ran: ['closed_set'] },
      })),
    });
    const u = await api.call('POST', '/api/fusion/uncertainty', {
      token: annotator,
      body: { session_id: sessionId, limit: 1000 },
    });
    expect(u.status).toBe(200);
    expect(u.body.policy).toMatchObject({ class_thresholds: { car: 0.7, bus: null } });
    const listed = new Set(u.body.objects.map((o: { object_id: string }) => o.object_id));
    expect(listed.has(fresh[0]!.id)).toBe(false);
    expect(listed.has(fresh[1]!.id)).toBe(true);
    expect(
      u.body.objects.find((o: { object_id: string }) => o.object_id === fresh[1]!.id).would_route.reason,
    ).toMatch(/never auto-accepts/);
  });

  it('refuses a fit that fitted nothing, and an unknown one', async () => {
    const empty = (await fit(reviewer, { session_ids: [emptySessionId] })).body;
    const res = await api.call('POST', `/api/fusion/thresholds/${empty.fit_id}/activate`, { token: admin });
    expect(res.status).toBe(409);
    expect(res.body.detail).toMatch(/fitted nothing/);
    expect(
      (await api.call('POST', `/api/fusion/thresholds/${randomUUID()}/activate`, { token: admin })).status,
    ).toBe(404);
  });
});

import { randomUUID } from 'node:crypto';
import { isControlSample } from '../core/control';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/**
 * The control sample on the real database: 2% of auto-accepted objects mirrored to review by a
 * seeded draw, human verdicts, and the precision they measure (Laplace-smoothed, 25 per check).
 */
const OBJECTS = 2500;
let db: TestDatabase;
let api: TestApi;
let reviewer: string;
let annotator: string;
let sessionId: string;
let objectIds: string[];

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  reviewer = (await createUserWithToken(api.deps, 'reviewer')).token;
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  const { db: prisma } = api.deps;
  sessionId = (await prisma.session.create({ data: { name: 'controls', sourceKind: 'frames' } })).id;
  const frame = await prisma.frame.create({
    data: { sessionId, index: 0, timestampMs: 0, width: 640, height: 360, uri: 's3://frames/none.jpg' },
  });
  objectIds = Array.from({ length: OBJECTS }, () => randomUUID());
  const jobId = randomUUID();
  await prisma.annoObject.createMany({
    data: objectIds.map((id, n) => ({
      id,
      frameId: frame.id,
      bbox: [0, 0, 10, 10],
      classId: 40,
      conf: 0.9,
      source: 'fused',
      state: n % 5 === 4 ? 'review' : 'auto_accept',
      idemKey: `al:${jobId}:${frame.id}:${n}`,
    })),
  });
  await prisma.provenance.createMany({
    data: objectIds.map((objectId) => ({
      objectId,
      paths: ['closed_set'],
      reasonerTrace: { critic: { ran: ['geometric', 'relationship'] } },
    })),
  });
  // A human object in auto_accept state would be a bug elsewhere; the control never takes human work.
  await prisma.annoObject.create({
    data: { frameId: frame.id, bbox: [0, 0, 5, 5], classId: 40, source: 'human', state: 'auto_accept' },
  });
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

const seed = (body: Record<string, unknown>) =>
  api.call('POST', '/api/govern/control/seed', { token: reviewer, body });

describe('seeding', () => {
  it('mirrors 2% of the auto-accepts by a seeded draw: reproducible, and nothing twice', async () => {
    const first = await seed({ seed: 7, session_id: sessionId });
    expect(first.status).toBe(200);
    const autoAccepts = OBJECTS - OBJECTS / 5;
    expect(first.body).toMatchObject({ seed: 7, rate: 0.02, considered: autoAccepts });
    expect(first.body.selected).toBeGreaterThan(autoAccepts * 0.01);
    expect(first.body.selected).toBeLessThan(autoAccepts * 0.03);
    expect(first.body.created).toBe(first.body.selected);
    const again = await seed({ seed: 7, session_id: sessionId });
    expect(again.body).toMatchObject({
      selected: first.body.selected,
      created: 0,
      already_controlled: first.body.selected,
    });
    const samples = await api.deps.db.controlSample.findMany();
    const keys = new Map(
      (await api.deps.db.annoObject.findMany({ where: { id: { in: samples.map((s) => s.objectId) } } })).map(
        (o) => [o.id, o],
      ),
    );
    for (const s of samples) {
      const o = keys.get(s.objectId)!;
      expect(o.state).toBe('auto_accept');
      expect(o.source).toBe('fused');
      expect(isControlSample(7, o.idemKey!)).toBe(true);
      expect(s.checks).toEqual(['geometric', 'relationship']);
    }
  });

  it('answers bad input with problem+json', async () => {
    const bad = await seed({ seed: -1, rate: 0.5 });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual(['body.rate', 'body.seed']);
    expect((await api.call('POST', '/api/govern/control/seed', { token: annotator, body: {} })).status).toBe(
      403,
    );
  });
});

describe('verdicts and precision', () => {
  it('is not yet measurable while too few controls are reviewed, naming those that await review', async () => {
    const res = await api.call('GET', '/api/govern/control/precision', { token: annotator });
    expect(res.status).toBe(200);
    const pending = await api.deps.db.controlSample.count({ where: { verdict: null } });
    expect(res.body).toMatchObject({
      status: 'not_yet_measurable',
      precision: null,
      reviewed: 0,
      pending,
      min_sample: 25,
      control_rate: 0.02,
    });
    expect(res.body.reason).toMatch(new RegExp(`0 of the 25 .*${pending} controls await review`));
  });

  it('takes verdicts once each, sends a wrong auto-accept back to review, and measures Laplace-smoothed precision from 25', async () => {
    const list = await api.call('GET', '/api/govern/control/pending?limit=30', { token: reviewer });
    expect(list.status).toBe(200);
    expect(list.body.items).toHaveLength(30);
    expect(list.body.items[0].object).toMatchObject({ state: 'auto_accept', source: 'fused' });
    const items = list.body.items as Array<{ sample_id: string; object_id: string }>;

    for (const [i, item] of items.slice(0, 24).entries()) {
      const verdict = i < 22 ? 'correct' : 'wrong_class';
      const r = await api.call('POST', `/api/govern/control/${item.sample_id}/verdict`, {
        token: reviewer,
        body: { verdict },
      });
      expect(r.status).toBe(200);
      expect(r.body.object_demoted_to_review).toBe(verdict !== 'correct');
    }
    const wrong = await api.deps.db.annoObject.findUniqueOrThrow({ where: { id: items[23]!.object_id } });
    expect(wrong).toMatchObject({ state: 'review', version: 2 });

    const still = await api.call('GET', '/api/govern/control/precision', { token: annotator });
    expect(still.body).toMatchObject({ status: 'not_yet_measurable', reviewed: 24 });

    const last = await api.call('POST', `/api/govern/control/${items[24]!.sample_id}/verdict`, {
      token: reviewer,
      body: { verdict: 'correct', note: 'fine' },
    });
    expect(last.status).toBe(200);
    const measured = await api.call('GET', `/api/govern/control/precision?session_id=${sessionId}`, {
      token: annotator,
    });
    expect(measured.body).toMatchObject({ status: 'measured', reviewed: 25, correct: 23, reason: null });
    expect(measured.body.precision).toBeCloseTo(24 / 27);
    expect(measured.body.by_check.geometric).toMatchObject({ status: 'measured', reviewed: 25 });
    expect(measured.body.by_check.temporal).toMatchObject({ status: 'not_yet_measurable', reviewed: 0 });

    const twice = await api.call('POST', `/api/govern/control/${items[0]!.sample_id}/verdict`, {
      token: reviewer,
      body: { verdict: 'false_positive' },
    });
    expect(twice.status).toBe(409);
    expect(
      (
        await api.call('POST', `/api/govern/control/${items[25]!.sample_id}/verdict`, {
          token: reviewer,
          body: { verdict: 'maybe' },
        })
      ).status,
    ).toBe(422);
    expect(
      (
        await api.call('POST', `/api/govern/control/${randomUUID()}/verdict`, {
          token: reviewer,
          body: { verdict: 'correct' },
        })
      ).status,
    ).toBe(404);
    expect(
      (
        await api.call('POST', `/api/govern/control/${items[25]!.sample_id}/verdict`, {
          token: annotator,
          body: { verdict: 'correct' },
        })
      ).status,
    ).toBe(403);

    const after = await api.call('GET', '/api/govern/control/pending', { token: reviewer });
    expect(after.body.total).toBe(list.body.total - 25);
    expect(await api.deps.db.auditLog.count({ where: { action: 'control.verdict' } })).toBe(25);
  });
});

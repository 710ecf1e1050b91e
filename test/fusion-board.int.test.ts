import { randomUUID } from 'node:crypto';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/**
 * The fusion board and the disagreement ranking on the real database, over fused objects whose
 * provenance says how their paths agreed:
 *
 * | object | class | paths ran → proposed | agreement | entropy | verifier | disagreement |
 * | agreed | car | closed_set, open_vocab → both | 1 | 0 | | none |
 * | split | car (car/truck 50/50) | closed_set, open_vocab → both | 1 | 1 | | class 1 |
 * | silent | bus | closed_set, open_vocab → closed_set | 0.5 | 0 | | path missing 0.5 |
 * | rejected | motorcycle | closed_set, verifier → closed_set | 0.5 | 0 | reject | verifier 1 (+ path missing) |
 *
 * Rarity over the 4 machine objects: car 2 of 4 → ln 3 / ln 5, the others 1 of 4 → 1.
 */
let db: TestDatabase;
let api: TestApi;
let annotator: string;
let sessionId: string;
const o: Record<'agreed' | 'split' | 'silent' | 'rejected' | 'human' | 'elsewhere', string> = {
  agreed: '',
  split: '',
  silent: '',
  rejected: '',
  human: '',
  elsewhere: '',
};

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
  annotator = (await createUserWithToken(api.deps, 'annotator')).token;
  const prisma = api.deps.db;
  sessionId = (await prisma.session.create({ data: { name: 'board', sourceKind: 'frames' } })).id;
  const otherSession = (await prisma.session.create({ data: { name: 'other', sourceKind: 'frames' } })).id;
  const frame = await prisma.frame.create({
    data: { sessionId, index: 3, timestampMs: 1000, width: 640, height: 360, uri: 's3://frames/a.jpg' },
  });
  const otherFrame = await prisma.frame.create({
    data: {
      sessionId: otherSession,
      index: 0,
      timestampMs: 0,
      width: 640,
      height: 360,
      uri: 's3://frames/b.jpg',
    },
  });
  const cls = async (name: string) => (await prisma.ontologyClass.findUniqueOrThrow({ where: { name } })).id;
  const make = async (
    key: keyof typeof o,
    p: {
      className: string;
      state: string;
      conf: number;
      source?: string;
      frameId?: string;
      ran: string[];
      proposed: string[];
      agreement: number;
      entropy: number;
      distribution: Record<string, number>;
      verdict?: string;
    },
  ) => {
    const obj = await prisma.annoObject.create({
      data: {
        frameId: p.frameId ?? frame.id,
        bbox: [0, 0, 10, 10],
        classId: await cls(p.className),
        conf: p.conf,
        source: p.source ?? 'fused',
        state: p.state,
      },
    });
    await prisma.provenance.create({
      data: {
        objectId: obj.id,
        paths: p.proposed,
        agreement: p.agreement,
        entropy: p.entropy,
        reasonerTrace: {
          paths_ran: p.ran,
          class_distribution: p.distribution,
          verifier: p.verdict ? { verdict: p.verdict } : null,
        },
      },
    });
    o[key] = obj.id;
  };
  const both = ['closed_set', 'open_vocab'];
  await make('agreed', {
    className: 'car',
    state: 'auto_accept',
    conf: 0.9,
    ran: both,
    proposed: both,
    agreement: 1,
    entropy: 0,
    distribution: { car: 1 },
  });
  await make('split', {
    className: 'car',
    state: 'review',
    conf: 0.6,
    ran: both,
    proposed: both,
    agreement: 1,
    entropy: 1,
    distribution: { car: 0.5, truck: 0.5 },
  });
  await make('silent', {
    className: 'bus',
    state: 'review',
    conf: 0.5,
    ran: both,
    proposed: ['closed_set'],
    agreement: 0.5,
    entropy: 0,
    distribution: { bus: 1 },
  });
  await make('rejected', {
    className: 'motorcycle',
    state: 'annotate',
    conf: 0.3,
    ran: ['closed_set', 'verifier'],
    proposed: ['closed_set'],
    agreement: 0.5,
    entropy: 0,
    distribution: { motorcycle: 1 },
    verdict: 'reject',
  });
  await make('human', {
    className: 'car',
    state: 'accepted',
    conf: 0.6,
    source: 'human',
    ran: both,
    proposed: both,
    agreement: 1,
    entropy: 1,
    distribution: { car: 0.5, truck: 0.5 },
  });
  await make('elsewhere', {
    className: 'bus',
    state: 'review',
    conf: 0.6,
    frameId: otherFrame.id,
    ran: both,
    proposed: both,
    agreement: 1,
    entropy: 1,
    distribution: { bus: 0.5, truck: 0.5 },
  });
  await prisma.autolabelJob.create({
    data: {
      sessionId,
      workflowId: `autolabel-${sessionId}`,
      state: 'completed',
      framesDone: 2,
      finishedAt: new Date('2026-11-01T10:00:00Z'),
      tally: {
        paths: { closed_set: { ran: 2 }, open_vocab: { refused: 2 }, verifier: { ran: 1 } },
        path_reasons: { open_vocab: 'not configured' },
        vetoes: { geometric: 1 },
        demoted: 1,
        verifier_asked: 3,
      },
    },
  });
  await prisma.controlSample.createMany({
    data: [
      { objectId: o.agreed, sessionId, seed: 1, className: 'car', conf: 0.9 },
      { objectId: randomUUID(), sessionId, seed: 1, className: 'car', conf: 0.95, verdict: 'correct' },
    ],
  });
});

afterAll(async () => {
  await api?.close();
  await db?.drop();
});

describe('GET /api/fusion/board', () => {
  it("shows a session's machine objects, its paths, agreement, critic, verifier and controls", async () => {
    const res = await api.call('GET', `/api/fusion/board?session_id=${sessionId}`, { token: annotator });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      session_id: sessionId,
      objects: { total: 4, by_state: { auto_accept: 1, review: 2, annotate: 1 } },
      paths: {
        closed_set: { proposed: 4, frames: { ran: 2 } },
        open_vocab: { proposed: 2, frames: { refused: 2 }, reason: 'not configured' },
        verifier: { proposed: 0, frames: { ran: 1 } },
      },
      agreement: { all_paths: 2, partial: 2, single_path: 0, class_disagreement: 1, mean: 0.75 },
      critic: { vetoes: { geometric: 1 }, demoted: 1 },
      verifier: { asked: 3 },
      jobs: { by_state: { completed: 1 }, frames_done: 2, last_finished_at: '2026-11-01T10:00:00.000Z' },
      controls: { pending: 1, reviewed: 1, correct: 1 },
      active_threshold_fit_id: null,
    });
    expect(res.body.classes[0]).toMatchObject({
      class_name: 'car',
      objects: 2,
      by_state: { auto_accept: 1, review: 1 },
    });
    expect(res.body.classes[0].mean_conf).toBeCloseTo(0.75);
  });

  it('covers every session without one, and refuses an unknown one', async () => {
    const all = await api.call('GET', '/api/fusion/board', { token: annotator });
    expect(all.body).toMatchObject({ session_id: null, objects: { total: 5 } });
    expect(
      (await api.call('GET', `/api/fusion/board?session_id=${randomUUID()}`, { token: annotator })).status,
    ).toBe(404);
    expect((await api.call('GET', '/api/fusion/board?session_id=nope', { token: annotator })).status).toBe(
      422,
    );
    expect((await api.call('GET', '/api/fusion/board')).status).toBe(401);
  });
});

describe('POST /api/fusion/disagreements/rank', () => {
  const rank = (body: Record<string, unknown>) =>
    api.call('POST', '/api/fusion/disagreements/rank', { token: annotator, body });

  it('ranks machine objects by disagreement × class rarity, naming what disagreed', async () => {
    const res = await rank({ session_id: sessionId });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ session_id: sessionId, considered: 4, disagreeing: 3 });
    expect(res.body.items.map((i: { object_id: string }) => i.object_id)).toEqual([
      o.rejected,
      o.split,
      o.silent,
    ]);
    const [rejected, split, silent] = res.body.items;
    expect(rejected).toMatchObject({
      kinds: ['path_missing', 'verifier_rejected'],
      silent_paths: ['verifier'],
      verifier_verdict: 'reject',
      disagreement: 1,
      rarity: 1,
      score: 1,
      frame_index: 3,
    });
    expect(split).toMatchObject({
      kinds: ['class_disagreement'],
      class_distribution: { car: 0.5, truck: 0.5 },
      disagreement: 1,
    });
    expect(split.score).toBeCloseTo(Math.log(3) / Math.log(5));
    expect(silent).toMatchObject({
      kinds: ['path_missing'],
      silent_paths: ['open_vocab'],
      disagreement: 0.5,
      score: 0.5,
    });
  });

  it('filters by kind, spans sessions without one, and refuses bad input', async () => {
    const missing = await rank({ session_id: sessionId, kinds: ['path_missing'] });
    expect(missing.body.items.map((i: { object_id: string }) => i.object_id)).toEqual([o.rejected, o.silent]);
    const all = await rank({ limit: 500 });
    const ids = all.body.items.map((i: { object_id: string }) => i.object_id);
    expect(ids).toContain(o.elsewhere);
    expect(ids).not.toContain(o.human);
    expect(ids).not.toContain(o.agreed);
    expect((await rank({ session_id: sessionId, limit: 1 })).body.items).toHaveLength(1);
    const bad = await rank({ limit: 0, kinds: ['nope'] });
    expect(bad.status).toBe(422);
    expect(JSON.stringify(bad.body)).toMatch(/limit/);
    expect(JSON.stringify(bad.body)).toMatch(/kinds/);
    expect((await rank({ session_id: randomUUID() })).status).toBe(404);
  });
});

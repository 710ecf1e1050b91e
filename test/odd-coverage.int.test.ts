import { randomUUID } from 'node:crypto';
import type { Frame } from '../generated/prisma/client';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * The coverage (ODD) group on the real PostgreSQL (docs/odd-coverage.md).
 *
 * The corpus (7 frames):
 * - s1, 4 frames: 0–1 dark, rain, night, urban; 2–3 normal, clear, day, highway. Frame 0 holds
 *   6 pedestrians (dense), frame 2 two cars (sparse).
 * - s2, 3 frames at 3 fps: normal, clear, day, no road type (unknown). Frame 0 holds 5 cars
 *   (moderate); frame 1 a rejected car only (empty: rejected objects are not there).
 */
const ctx = useApiForFile();
const sessions = { s1: '', s2: '' };
let frames: Record<'s1' | 's2', Frame[]>;

const DARK_RAIN = 'lighting=dark|weather=rain';
const NORMAL_CLEAR = 'lighting=normal|weather=clear';

beforeAll(async () => {
  const deps = ctx.api.deps;
  const s1 = await createSessionFixture(deps, {
    frames: 4,
    storeImages: false,
    context: (i) =>
      i < 2
        ? { exposure: { mean_luma: 40 }, weather: 'rain', time_of_day: 'night', road_type: 'urban' }
        : { exposure: { mean_luma: 120 }, weather: 'clear', time_of_day: 'day', road_type: 'highway' },
  });
  const s2 = await createSessionFixture(deps, {
    frames: 3,
    storeImages: false,
    context: () => ({ exposure: { mean_luma: 120 }, weather: 'clear', time_of_day: 'day' }),
  });
  sessions.s1 = s1.session.id;
  sessions.s2 = s2.session.id;
  frames = { s1: s1.frames, s2: s2.frames };
  const classes = new Map(
    (await deps.db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.name, c.id]),
  );
  const place = (frame: Frame, className: string, count: number, state = 'accepted') =>
    deps.db.annoObject.createMany({
      data: Array.from({ length: count }, (_, i) => ({
        id: randomUUID(),
        frameId: frame.id,
        bbox: [i, i, i + 10, i + 20],
        classId: classes.get(className)!,
        state,
        source: 'human',
      })),
    });
  await place(frames.s1[0]!, 'pedestrian', 6);
  await place(frames.s1[2]!, 'car', 2);
  await place(frames.s2[0]!, 'car', 5);
  await place(frames.s2[1]!, 'car', 1, 'rejected');
}, 120_000);

const call = (method: string, url: string, body?: unknown, token = ctx.token.reviewer) =>
  ctx.api.call(method, url, { token, body });
const read = (url: string) => call('GET', url, undefined, ctx.token.annotator);
type Value = { value: string; frames: number; sessions: number; objects: { total: number; by_l1: object } };
const valuesOf = (body: { attributes: Array<{ attribute: string; values: Value[] }> }, attribute: string) =>
  Object.fromEntries(body.attributes.find((a) => a.attribute === attribute)!.values.map((v) => [v.value, v]));
const framesOf = (body: Parameters<typeof valuesOf>[0], attribute: string) =>
  Object.fromEntries(Object.entries(valuesOf(body, attribute)).map(([k, v]) => [k, v.frames]));

describe('composition', () => {
  it('counts frames, sessions and objects per attribute value from what the frames carry', async () => {
    const res = await read('/api/odd/composition');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ frames: 7, sessions: 2, objects: 13 });
    expect(framesOf(res.body, 'lighting')).toEqual({ dark: 2, normal: 5 });
    expect(framesOf(res.body, 'weather')).toEqual({ rain: 2, clear: 5 });
    expect(framesOf(res.body, 'time_of_day')).toEqual({ night: 2, day: 5 });
    expect(framesOf(res.body, 'road_type')).toEqual({ urban: 2, highway: 2, unknown: 3 });
    expect(framesOf(res.body, 'maneuver')).toEqual({ unknown: 7 });
    expect(framesOf(res.body, 'scene_density')).toEqual({ dense: 1, moderate: 1, sparse: 1, empty: 4 });
    expect(valuesOf(res.body, 'weather').rain).toMatchObject({
      sessions: 1,
      objects: { total: 6, by_l1: { vru: 6 } },
    });
    expect(valuesOf(res.body, 'weather').clear).toMatchObject({
      sessions: 2,
      objects: { total: 7, by_l1: { vehicle: 7 } },
    });
    const lighting = res.body.attributes.find((a: { attribute: string }) => a.attribute === 'lighting');
    expect(lighting.source).toMatch(/exposure/);
  });

  it('filters by sessions and by classes (with descendants)', async () => {
    const s2 = await read(`/api/odd/composition?session_ids=${sessions.s2}`);
    expect(s2.body).toMatchObject({ frames: 3, sessions: 1, objects: 5 });
    expect(framesOf(s2.body, 'road_type')).toEqual({ unknown: 3 });
    const people = await read('/api/odd/composition?classes=person');
    expect(people.status).toBe(200);
    expect(people.body).toMatchObject({ frames: 1, objects: 6, scope: { classes: ['person'] } });
    expect(framesOf(people.body, 'scene_density')).toEqual({ dense: 1 });
  });

  it('refuses unknown classes (422) and sessions (404)', async () => {
    const bad = await read('/api/odd/composition?classes=person,unicorn');
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(bad.body.errors).toEqual([expect.objectContaining({ field: 'query.classes.1' })]);
    expect((await read(`/api/odd/composition?session_ids=${randomUUID()}`)).status).toBe(404);
    expect((await read('/api/odd/composition?session_ids=nope')).status).toBe(422);
  });
});

describe('gaps', () => {
  it('finds values under target and missing ones, with the frames short', async () => {
    const res = await call('POST', '/api/odd/odd/gaps', {
      target: {
        weather: { rain: { min_share: 0.5 }, snow: { min_frames: 2 } },
        lighting: { dark: { min_frames: 1 } },
      },
    });
    expect(res.status).toBe(200);
    expect(res.body.frames).toBe(7);
    // rain: 2 of 7; 3 more rainy frames make 5 of 10.
    expect(res.body.gaps).toEqual([
      expect.objectContaining({
        attribute: 'weather',
        value: 'rain',
        status: 'under',
        frames: 2,
        frames_short: 3,
      }),
      expect.objectContaining({
        attribute: 'weather',
        value: 'snow',
        status: 'missing',
        frames: 0,
        frames_short: 2,
      }),
    ]);
    expect(res.body.requirements).toContainEqual(
      expect.objectContaining({ attribute: 'lighting', value: 'dark', status: 'met', frames_short: 0 }),
    );
  });

  it('refuses a closed attribute value, an empty target and a bound-less value (422)', async () => {
    for (const target of [{ lighting: { dusky: { min_frames: 1 } } }, {}, { weather: { rain: {} } }]) {
      const res = await call('POST', '/api/odd/odd/gaps', { target });
      expect(res.status).toBe(422);
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    const share = await call('POST', '/api/odd/odd/gaps', {
      target: { weather: { rain: { min_share: 1 } } },
    });
    expect(share.status).toBe(422);
    expect(share.body.errors[0].field).toBe('body.target.weather.rain.min_share');
  });
});

describe('cliques', () => {
  it('answers the coverage of 2- and 3-attribute combinations', async () => {
    const res = await read('/api/odd/cliques?attributes=lighting,weather,time_of_day&limit=1000');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.cliques.map((c: { clique: string }) => [c.clique, c]));
    expect(byName[DARK_RAIN]).toMatchObject({ size: 2, frames: 2, sessions: 1, objects: 6 });
    expect(byName[DARK_RAIN].expected_frames).toBeCloseTo((7 * 2 * 2) / 49, 9);
    expect(byName['lighting=dark|weather=rain|time_of_day=night']).toMatchObject({
      size: 3,
      frames: 2,
      objects: 6,
    });
    // Canonical order is ODD_ATTRIBUTES: lighting, weather, time_of_day.
    expect(byName['lighting=normal|weather=clear|time_of_day=day']).toMatchObject({
      size: 3,
      frames: 5,
      objects: 7,
    });
    // Three pairs of attributes and one triple, each with two combinations present.
    expect(res.body).toMatchObject({ total: 8, truncated: false });
    expect(res.body.cliques).toHaveLength(8);
  });

  it('counts objects of a class, leaves out unknown values unless asked, and bounds the answer', async () => {
    const cars = await read('/api/odd/cliques?classes=car&sizes=2&attributes=lighting,weather');
    expect(cars.body.cliques).toEqual([
      expect.objectContaining({ clique: NORMAL_CLEAR, frames: 2, objects: 7 }),
    ]);
    const road = await read('/api/odd/cliques?sizes=2&attributes=weather,road_type');
    expect(road.body.cliques.map((c: { clique: string }) => c.clique).sort()).toEqual([
      'weather=clear|road_type=highway',
      'weather=rain|road_type=urban',
    ]);
    const withUnknown = await read(
      '/api/odd/cliques?sizes=2&attributes=weather,road_type&include_unknown=true',
    );
    expect(withUnknown.body.cliques).toContainEqual(
      expect.objectContaining({ clique: 'weather=clear|road_type=unknown', frames: 3 }),
    );
    const one = await read('/api/odd/cliques?limit=1&order=frames_asc');
    expect(one.body.cliques).toHaveLength(1);
    expect(one.body.truncated).toBe(true);
    for (const q of ['sizes=4', 'limit=1001', 'attributes=colour', 'order=random'])
      expect((await read(`/api/odd/cliques?${q}`)).status).toBe(422);
  });
});

describe('the clique bandit', () => {
  const select = (seed = 3) =>
    call('POST', '/api/odd/cliques/select', { budget: 1000, cliques: [DARK_RAIN, NORMAL_CLEAR], seed });
  const labels = (body: { allocations: Array<{ clique: string; labels: number }> }, clique: string) =>
    body.allocations.find((a) => a.clique === clique)!.labels;

  it('select → reward → select moves the allocation toward the rewarded clique', async () => {
    const before = await select();
    expect(before.status).toBe(200);
    expect(before.body.allocations.reduce((s: number, a: { labels: number }) => s + a.labels, 0)).toBe(1000);
    expect(labels(before.body, NORMAL_CLEAR)).toBeGreaterThan(350);
    expect(labels(before.body, NORMAL_CLEAR)).toBeLessThan(650);
    expect(before.body.allocations[0]).toMatchObject({
      posterior: { alpha: 1, beta: 1 },
      draws: { of: 1000 },
    });
    expect((await select()).body).toEqual(before.body);

    // 25 recall points on 500 labels: 5 per 100, a full success, counted as 5 trials.
    const reward = await call('POST', '/api/odd/cliques/reward', {
      clique: 'weather=clear|lighting=normal',
      allocated: 500,
      recall_before: 0.4,
      recall_after: 0.65,
    });
    expect(reward.status).toBe(201);
    expect(reward.body).toMatchObject({
      clique: NORMAL_CLEAR,
      observation: { observed: true, reward: 1, trials: 5 },
      posterior: {
        before: { alpha: 1, beta: 1 },
        after: { alpha: 6, beta: 1, observations: 1, labels: 500 },
      },
    });
    // A null recall records the reward but observes nothing.
    const blind = await call('POST', '/api/odd/cliques/reward', {
      clique: DARK_RAIN,
      allocated: 200,
      recall_before: null,
      recall_after: 0.5,
    });
    expect(blind.status).toBe(201);
    expect(blind.body).toMatchObject({
      observation: { observed: false },
      posterior: { after: { alpha: 1, beta: 1, observations: 0 } },
    });

    const after = await select();
    expect(labels(after.body, NORMAL_CLEAR)).toBeGreaterThan(labels(before.body, NORMAL_CLEAR));
    expect(labels(after.body, NORMAL_CLEAR)).toBeGreaterThan(700);
    expect(after.body.allocations[0]).toMatchObject({ clique: NORMAL_CLEAR, greedy: true, observations: 1 });
    expect(after.body.allocations[1]).toMatchObject({ clique: DARK_RAIN, greedy: false });
    expect(after.body.allocations[1].exploration_labels).toBe(after.body.allocations[1].labels);

    const { db } = ctx.api.deps;
    expect(await db.oddCliqueReward.count()).toBe(2);
    expect(await db.oddCliqueArm.findUnique({ where: { clique: NORMAL_CLEAR } })).toMatchObject({
      alpha: 6,
      beta: 1,
    });
    expect(await db.auditLog.count({ where: { action: 'odd.clique.rewarded' } })).toBe(2);
  });

  it('allocates across the highest-priority cliques when none are named', async () => {
    const res = await call('POST', '/api/odd/cliques/select', { budget: 40, candidates: 3 });
    expect(res.status).toBe(200);
    expect(res.body.from).toBe('priority');
    expect(res.body.allocations).toHaveLength(3);
    expect(res.body.allocations.reduce((s: number, a: { labels: number }) => s + a.labels, 0)).toBe(40);
  });

  it('refuses malformed rewards and writes nothing', async () => {
    const { db } = ctx.api.deps;
    const rows = await db.oddCliqueReward.count();
    for (const body of [
      { clique: 'lighting=dusky', allocated: 10 },
      { clique: 'weather=rain|weather=snow', allocated: 10 },
      { clique: DARK_RAIN, allocated: 0 },
      { clique: DARK_RAIN, allocated: 10, recall_after: 1.5 },
      { clique: DARK_RAIN, allocated: 10, extra: true },
      { allocated: 10 },
    ]) {
      const res = await call('POST', '/api/odd/cliques/reward', body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect(await db.oddCliqueReward.count()).toBe(rows);
    expect((await call('POST', '/api/odd/cliques/select', { budget: 0 })).status).toBe(422);
    expect(
      (await call('POST', '/api/odd/cliques/select', { budget: 5, cliques: ['colour=red'] })).status,
    ).toBe(422);
  });
});

describe('priority', () => {
  it('ranks cliques by coverage × bandit × rarity, each explained', async () => {
    const res = await read('/api/odd/priority?sizes=2&limit=1000');
    expect(res.status).toBe(200);
    const byName = Object.fromEntries(res.body.priority.map((p: { clique: string }) => [p.clique, p]));
    const rewarded = byName[NORMAL_CLEAR];
    expect(rewarded.terms.bandit).toBeCloseTo(6 / 7, 12);
    expect(rewarded.terms.coverage).toBeCloseTo(1 / (1 + 5 / 100), 12);
    expect(rewarded.terms.rarity).toBeCloseTo(1 - 5 / 7, 12);
    expect(rewarded.score).toBeCloseTo((6 / 7) * (1 / 1.05) * (2 / 7), 12);
    expect(rewarded.reason).toMatch(/1 observed rewards/);
    expect(byName[DARK_RAIN].terms.bandit).toBe(0.5);
    expect(res.body.priority.map((p: { rank: number }) => p.rank)).toEqual(
      res.body.priority.map((_: unknown, i: number) => i + 1),
    );
    expect(Object.keys(byName).some((name) => name.includes('unknown'))).toBe(false);
  });
});

describe('discover', () => {
  it('lists unseen vocabulary values, absent pairs and under-represented pairs', async () => {
    const res = await read('/api/odd/discover?attributes=lighting,weather&min_share=0.3');
    expect(res.status).toBe(200);
    expect(res.body.unseen_values).toEqual(
      expect.arrayContaining([
        { attribute: 'lighting', value: 'bright' },
        { attribute: 'weather', value: 'snow' },
        { attribute: 'weather', value: 'fog' },
      ]),
    );
    // Both are expected in 10/7 frames under independence; the tie goes by name.
    expect(res.body.absent.map((a: { clique: string }) => a.clique)).toEqual([
      'lighting=dark|weather=clear',
      'lighting=normal|weather=rain',
    ]);
    expect(res.body.absent[0].expected_frames).toBeCloseTo((7 * 5 * 2) / 49, 9);
    expect(res.body.under_represented).toEqual([
      expect.objectContaining({ clique: DARK_RAIN, frames: 2, share: 2 / 7 }),
    ]);
  });
});

describe('manoeuvre tags', () => {
  it('tags a frame range by index and by timestamp, audited, and composition follows', async () => {
    const byIndex = await call('POST', '/api/odd/maneuver', {
      session_id: sessions.s1,
      maneuver: 'left_turn',
      from_index: 0,
      to_index: 1,
    });
    expect(byIndex.status).toBe(200);
    expect(byIndex.body).toMatchObject({
      frames: 2,
      first_index: 0,
      last_index: 1,
      previous: { unknown: 2 },
    });
    // s2 at 3 fps: frames at 0, 333 and 667 ms.
    const byTime = await call('POST', '/api/odd/maneuver', {
      session_id: sessions.s2,
      maneuver: 'stop',
      from_ms: 300,
      to_ms: 700,
    });
    expect(byTime.body).toMatchObject({
      frames: 2,
      first_index: 1,
      last_index: 2,
      range: { by: 'timestamp_ms' },
    });
    const again = await call('POST', '/api/odd/maneuver', {
      session_id: sessions.s1,
      maneuver: 'straight',
      from_index: 1,
      to_index: 3,
    });
    expect(again.body).toMatchObject({ frames: 3, previous: { left_turn: 1, unknown: 2 } });

    const composition = await read('/api/odd/composition');
    expect(framesOf(composition.body, 'maneuver')).toEqual({
      left_turn: 1,
      straight: 3,
      stop: 2,
      unknown: 1,
    });
    const frame = await ctx.api.deps.db.frame.findUniqueOrThrow({ where: { id: frames.s1[0]!.id } });
    expect(frame.context).toMatchObject({
      maneuver: 'left_turn',
      weather: 'rain',
      exposure: { mean_luma: 40 },
    });
    const audit = await ctx.api.deps.db.auditLog.findMany({ where: { action: 'odd.maneuver.tagged' } });
    expect(audit).toHaveLength(3);
    expect(audit[0]).toMatchObject({ subjectType: 'session', subjectId: sessions.s1 });
  });

  it('refuses what it cannot tag, writing nothing', async () => {
    const before = await ctx.api.deps.db.frame.findMany({
      orderBy: { id: 'asc' },
      select: { context: true },
    });
    const cases: Array<[unknown, number]> = [
      [{ session_id: sessions.s1, maneuver: 'moonwalk', from_index: 0, to_index: 1 }, 422],
      [{ session_id: sessions.s1, maneuver: 'stop', from_index: 0, to_index: 1, from_ms: 0, to_ms: 5 }, 422],
      [{ session_id: sessions.s1, maneuver: 'stop', from_index: 3, to_index: 1 }, 422],
      [{ session_id: sessions.s1, maneuver: 'stop', from_index: 1 }, 422],
      [{ session_id: sessions.s1, maneuver: 'stop', from_index: 50, to_index: 60 }, 422],
      [{ session_id: randomUUID(), maneuver: 'stop', from_index: 0, to_index: 1 }, 404],
    ];
    for (const [body, status] of cases) {
      const res = await call('POST', '/api/odd/maneuver', body);
      expect({ body, status: res.status }).toEqual({ body, status });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
    }
    expect(
      await ctx.api.deps.db.frame.findMany({ orderBy: { id: 'asc' }, select: { context: true } }),
    ).toEqual(before);
  });
});

describe('roles', () => {
  it('answers 401 without a token and 403 to an annotator writing', async () => {
    for (const [method, url] of [
      ['GET', '/api/odd/composition'],
      ['GET', '/api/odd/cliques'],
      ['GET', '/api/odd/priority'],
      ['GET', '/api/odd/discover'],
      ['POST', '/api/odd/odd/gaps'],
      ['POST', '/api/odd/cliques/select'],
      ['POST', '/api/odd/cliques/reward'],
      ['POST', '/api/odd/maneuver'],
    ] as const)
      expect((await ctx.api.call(method, url)).status).toBe(401);
    for (const url of [
      '/api/odd/odd/gaps',
      '/api/odd/cliques/select',
      '/api/odd/cliques/reward',
      '/api/odd/maneuver',
    ])
      expect((await call('POST', url, {}, ctx.token.annotator)).status).toBe(403);
  });
});

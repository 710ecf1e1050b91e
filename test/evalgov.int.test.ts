import { createFrame, removeTestBlobs } from '../testkit/annotations';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';
import { bootstrapInterval, pairedSignificance, wilsonInterval } from '../core/quality/stats';

/**
 * Evaluation governance on the real stack (docs/quality-evalgov.md): two imported runs of two
 * external models against a sealed gold set whose outcomes are known by construction, evaluated
 * whole and per slice with hand-computed COCO AP; the matrix, pairs, model evaluations and the
 * hierarchical roll-up over those evaluations; paired significance and the bootstrap against
 * core's numbers; safety recall floors; shadow triage; the blind-audit lifecycle; refusals.
 *
 * Gold (16 frames, 640×360, every box exact where a model finds it):
 *   f0 car A0, pedestrian P0 · f1 car A1 · f2 pedestrian P2, motorcycle M2 · f3 car A3 ·
 *   f4 pedestrian P4 · f5 car A5, motorcycle M5 · f6–f15 one truck each.
 *   Frames 0–2 are `weather: rain`, the rest `clear`.
 * `good` finds every box (conf 0.9). `weak` finds A0 .9, A1 .8, A5 .6, a false car on f3 .85,
 *   P0 .7, M2 .95, M5 .5, and no truck.
 */
const ctx = {} as {
  api: TestApi;
  db: TestDatabase;
  token: Record<'annotator' | 'reviewer' | 'admin', string>;
};
const api = (method: string, path: string, token: string, body?: unknown) =>
  ctx.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });
const db = () => ctx.api.deps.db;

type Cls = 'car' | 'pedestrian' | 'motorcycle' | 'truck';
const GOLD: Array<Array<[Cls, [number, number, number, number]]>> = [
  [
    ['car', [50, 50, 150, 150]],
    ['pedestrian', [300, 100, 340, 200]],
  ],
  [['car', [100, 100, 250, 200]]],
  [
    ['pedestrian', [400, 100, 440, 220]],
    ['motorcycle', [200, 200, 280, 280]],
  ],
  [['car', [60, 60, 200, 160]]],
  [['pedestrian', [500, 150, 540, 260]]],
  [
    ['car', [10, 10, 110, 110]],
    ['motorcycle', [300, 200, 380, 290]],
  ],
  ...Array.from({ length: 10 }, (_, i): Array<[Cls, [number, number, number, number]]> => [
    ['truck', [20 + i * 10, 40, 220 + i * 10, 200]],
  ]),
];
const FALSE_CAR: [number, number, number, number] = [400, 250, 500, 330];
/** weak: [frame, class, conf, box]. */
const WEAK: Array<[number, Cls, number, [number, number, number, number]]> = [
  [0, 'car', 0.9, GOLD[0]![0]![1]],
  [1, 'car', 0.8, GOLD[1]![0]![1]],
  [5, 'car', 0.6, GOLD[5]![0]![1]],
  [3, 'car', 0.85, FALSE_CAR],
  [0, 'pedestrian', 0.7, GOLD[0]![1]![1]],
  [2, 'motorcycle', 0.95, GOLD[2]![1]![1]],
  [5, 'motorcycle', 0.5, GOLD[5]![1]![1]],
];
// Hand-computed 101-point AP (exact boxes: the same at every IoU threshold).
// car: TP .9, FP .85, TP .8, TP .6 over 4 gold → precision 1 to recall .25 (26 points), .75 to .75 (50).
const CAR_AP = (26 + 50 * 0.75) / 101;
// pedestrian: one TP over 3 gold → precision 1 to recall 1/3 (34 points).
const PED_AP = 34 / 101;
const WEAK_MAP = (CAR_AP + PED_AP + 1 + 0) / 4;
// Rain slice (frames 0–2): car 2/2 without the false car, pedestrian 1 of 2 (51 points), motorcycle 1/1.
const WEAK_RAIN_MAP = (1 + 51 / 101 + 1) / 3;

let frameIds: string[];
let sessionId: string;
let goldId: string;
let goodRun: string;
let weakRun: string;
let rainSlice: string;
let pedSlice: string;
const classId: Record<string, number> = {};

beforeAll(async () => {
  ctx.db = await createTestDatabase();
  ctx.api = await startTestApi(testConfig({ DATABASE_URL: ctx.db.url }));
  ctx.token = {} as typeof ctx.token;
  for (const role of ['annotator', 'reviewer', 'admin'] as const)
    ctx.token[role] = (await createUserWithToken(ctx.api.deps, role)).token;
  const deps = ctx.api.deps;
  for (const c of await db().ontologyClass.findMany()) classId[c.name] = c.id;
  sessionId = (await db().session.create({ data: { name: 'evalgov drive', sourceKind: 'frames' } })).id;
  frameIds = [];
  for (let i = 0; i < GOLD.length; i++) {
    const { frame: f } = await createFrame(deps, { sessionId });
    await db().frame.update({
      where: { id: f.id },
      data: { context: { weather: i < 3 ? 'rain' : 'clear' } },
    });
    frameIds.push(f.id);
  }
  for (const [i, boxes] of GOLD.entries())
    for (const [cls, bbox] of boxes) {
      const res = await api('POST', `/api/frames/${frameIds[i]}/objects`, ctx.token.reviewer, {
        class_name: cls,
        bbox,
      });
      expect(res.status).toBe(201);
    }
  const seal = await api('POST', '/api/quality/gold/seal', ctx.token.reviewer, {
    name: 'evalgov',
    frame_ids: frameIds,
  });
  expect(seal.status).toBe(201);
  goldId = seal.body.id;
  for (const [version, preds] of [
    [
      'ext-good@1',
      GOLD.flatMap((boxes, i) =>
        boxes.map(([cls, bbox]) => ({ frame_id: frameIds[i], class_name: cls, conf: 0.9, bbox })),
      ),
    ],
    [
      'ext-weak@1',
      WEAK.map(([i, cls, conf, bbox]) => ({ frame_id: frameIds[i], class_name: cls, conf, bbox })),
    ],
  ] as const) {
    const model = await api('POST', '/api/models/external', ctx.token.reviewer, {
      model_version: version,
      name: version,
      class_names: ['car', 'pedestrian', 'motorcycle', 'truck'],
    });
    expect(model.status).toBe(201);
    const run = await api('POST', '/api/inference-runs', ctx.token.reviewer, {
      mode: 'import',
      model_version: version,
      predictions: preds,
    });
    expect(run.status).toBe(201);
    if (version === 'ext-good@1') goodRun = run.body.id;
    else weakRun = run.body.id;
  }
  const rain = await api('POST', '/api/curation/slices', ctx.token.reviewer, {
    name: 'rain',
    predicate: { context: { weather: 'rain' } },
  });
  expect(rain.status).toBe(201);
  rainSlice = rain.body.id;
  const ped = await api('POST', '/api/curation/slices', ctx.token.reviewer, {
    name: 'pedestrians',
    predicate: { classes: ['pedestrian'], states: ['accepted'] },
  });
  expect(ped.status).toBe(201);
  pedSlice = ped.body.id;
}, 120_000);

afterAll(async () => {
  if (ctx.api) await removeTestBlobs(ctx.api.deps);
  await ctx.api?.close();
  await ctx.db?.drop();
});

const evaluate = (run: string, token = ctx.token.annotator) =>
  api('POST', '/api/evalgov/evaluate', token, {
    run_id: run,
    gold_id: goldId,
    slice_ids: [rainSlice, pedSlice],
  });

describe('evaluate', () => {
  let weakEval: any;

  it('evaluates a run whole and per slice with exact COCO AP from both harnesses, one operation per scope', async () => {
    const good = await evaluate(goodRun);
    expect(good.status).toBe(200);
    expect(good.body.evaluations.map((e: any) => [e.slice_name, e.map])).toEqual([
      [null, 1],
      ['rain', 1],
      ['pedestrians', 1],
    ]);
    const res = await evaluate(weakRun);
    expect(res.status).toBe(200);
    weakEval = res.body;
    const [whole, rain, ped] = res.body.evaluations;
    expect(whole).toMatchObject({ slice_id: null, frames: 16, gold: 19, predicted: 7, tp: 6, fp: 1, fn: 13 });
    expect(whole.map).toBeCloseTo(WEAK_MAP, 12);
    expect(whole.ap50).toBeCloseTo(WEAK_MAP, 12);
    expect(whole.recall).toBeCloseTo(6 / 19, 12);
    expect(whole.precision).toBeCloseTo(6 / 7, 12);
    const byName = Object.fromEntries(whole.classes.map((c: any) => [c.class_name, c]));
    expect(byName.car.ap).toBeCloseTo(CAR_AP, 12);
    expect(byName.pedestrian.ap).toBeCloseTo(PED_AP, 12);
    expect(byName.motorcycle.ap).toBe(1);
    expect(byName.truck).toMatchObject({ ap: 0, gold: 10, tp: 0, fn: 10 });
    // The second harness agrees within the epsilon the gate applies.
    expect(whole.parity).toMatchObject({ within: true, epsilon: 1e-6, diverging: [] });
    expect(whole.streaming.AP).toBeCloseTo(whole.map, 9);
    expect(whole.coco.AR100).toBeCloseTo(whole.ar100, 12);
    expect(rain).toMatchObject({
      slice_id: rainSlice,
      slice_name: 'rain',
      frames: 3,
      gold: 5,
      not_applied: [],
    });
    expect(rain.map).toBeCloseTo(WEAK_RAIN_MAP, 12);
    // The class slice: pedestrians on every frame; its `states` condition does not apply to gold.
    expect(ped).toMatchObject({
      slice_id: pedSlice,
      frames: 16,
      gold: 3,
      predicted: 1,
      not_applied: ['states'],
    });
    expect(ped.map).toBeCloseTo(PED_AP, 12);
    const ops = await db().evalOperation.findMany({
      where: { opType: 'evalgov_evaluate', subjectIds: { has: weakRun } },
    });
    expect(ops).toHaveLength(3);
    const subjects = ops.find((o) => o.id === rain.operation_id)!.subjectIds;
    expect(subjects).toEqual(expect.arrayContaining([weakRun, goldId, 'ext-weak@1', rainSlice]));
  });

  it('shows the model × slice matrix, the pairs and the model evaluations', async () => {
    const matrix = await api('GET', `/api/evalgov/matrix?gold_id=${goldId}`, ctx.token.annotator);
    expect(matrix.status).toBe(200);
    expect(matrix.body.columns).toEqual([
      { slice_id: null, slice_name: 'all' },
      { slice_id: pedSlice, slice_name: 'pedestrians' },
      { slice_id: rainSlice, slice_name: 'rain' },
    ]);
    expect(matrix.body.rows.map((r: any) => r.model_version)).toEqual(['ext-good@1', 'ext-weak@1']);
    const weakRow = matrix.body.rows[1];
    expect(weakRow.cells[0].map).toBeCloseTo(WEAK_MAP, 12);
    expect(weakRow.cells[0].operation_id).toBe(weakEval.evaluations[0].operation_id);
    expect(weakRow.cells[1].map).toBeCloseTo(PED_AP, 12);
    expect(weakRow.cells[2]).toMatchObject({ run_id: weakRun, recall: 4 / 5 });
    expect(matrix.body.rows[0].cells.map((c: any) => c.map)).toEqual([1, 1, 1]);

    const pairs = await api('GET', `/api/evalgov/pairs?gold_id=${goldId}`, ctx.token.annotator);
    expect(pairs.status).toBe(200);
    expect(pairs.body.total).toBe(3);
    const whole = pairs.body.items.find((p: any) => p.slice_id === null);
    // good was evaluated first: the champion; deltas are challenger − champion.
    expect(whole.champion.model_version).toBe('ext-good@1');
    expect(whole.challenger.model_version).toBe('ext-weak@1');
    expect(whole.delta.map).toBeCloseTo(WEAK_MAP - 1, 12);
    expect(whole.significance).toBeNull();
    const one = await api('GET', `/api/evalgov/pairs?gold_id=${goldId}&slice_id=all`, ctx.token.annotator);
    expect(one.body.items).toHaveLength(1);

    const page1 = await api('GET', '/api/evalgov/model/ext-weak@1/evals?limit=2', ctx.token.annotator);
    expect(page1.status).toBe(200);
    expect(page1.body.items).toHaveLength(2);
    expect(page1.body.next_cursor).not.toBeNull();
    const page2 = await api(
      'GET',
      `/api/evalgov/model/ext-weak@1/evals?limit=2&cursor=${page1.body.next_cursor}`,
      ctx.token.annotator,
    );
    expect(page2.body.items).toHaveLength(1);
    expect(page2.body.next_cursor).toBeNull();
    const all = [...page1.body.items, ...page2.body.items];
    expect(all.map((e: any) => e.operation_id).sort()).toEqual(
      weakEval.evaluations.map((e: any) => e.operation_id).sort(),
    );
    expect(all.every((e: any) => e.model_version === 'ext-weak@1' && e.run_id === weakRun)).toBe(true);
    expect((await api('GET', '/api/evalgov/model/nobody@0/evals', ctx.token.annotator)).status).toBe(404);
  });

  it('rolls an evaluation up by l0 and l1, micro and macro', async () => {
    const res = await api(
      'GET',
      `/api/evalgov/hierarchical?model_version=ext-weak@1&gold_id=${goldId}`,
      ctx.token.annotator,
    );
    expect(res.status).toBe(200);
    expect(res.body.operation_id).toBe(weakEval.evaluations[0].operation_id);
    expect(res.body.l0).toHaveLength(1);
    const object = res.body.l0[0];
    expect(object).toMatchObject({ l0: 'object', classes: 4, gold: 19, tp: 6, fp: 1, fn: 13 });
    expect(object.micro.recall).toBeCloseTo(6 / 19, 12);
    expect(object.macro.ap).toBeCloseTo(WEAK_MAP, 12);
    const l1 = Object.fromEntries(res.body.l1.map((g: any) => [g.l1, g]));
    expect(l1.vehicle).toMatchObject({ classes: 2, gold: 14, tp: 3, fp: 1 });
    expect(l1.vehicle.macro.ap).toBeCloseTo((CAR_AP + 0) / 2, 12);
    expect(l1.vru).toMatchObject({ gold: 3, tp: 1 });
    expect(l1.two_wheeler).toMatchObject({ gold: 2, tp: 2 });
    // The l1 groups sum to their l0 group.
    for (const k of ['gold', 'predicted', 'tp', 'fp', 'fn'])
      expect(res.body.l1.reduce((s: number, g: any) => s + g[k], 0)).toBe(object[k]);
    const bySlice = await api(
      'GET',
      `/api/evalgov/hierarchical?operation_id=${weakEval.evaluations[1].operation_id}`,
      ctx.token.annotator,
    );
    expect(bySlice.body).toMatchObject({ slice_id: rainSlice, l0: [{ gold: 5 }] });
    const both = await api(
      'GET',
      `/api/evalgov/hierarchical?operation_id=${weakEval.evaluations[1].operation_id}&model_version=x`,
      ctx.token.annotator,
    );
    expect(both.status).toBe(422);
    const notEval = await api(
      'GET',
      `/api/evalgov/hierarchical?operation_id=00000000-0000-4000-8000-000000000000`,
      ctx.token.annotator,
    );
    expect(notEval.status).toBe(404);
  });
});

describe('statistics', () => {
  it('finds the better run by a paired test, deterministically per seed, and attaches it to the pair', async () => {
    const body = { run_a: goodRun, run_b: weakRun, gold_id: goldId, n_boot: 500, n_perm: 2000 };
    const res = await api('POST', '/api/evalgov/stats/significance', ctx.token.annotator, body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      frames: 16,
      better_run_by_map: goodRun,
      better_run_by_frame_f1: goodRun,
      model_a: 'ext-good@1',
      seed: 12345,
    });
    expect(res.body.map_a).toBe(1);
    expect(res.body.map_difference.estimate).toBeCloseTo(1 - WEAK_MAP, 12);
    expect(res.body.map_difference.lo).toBeGreaterThan(0);
    // Per-frame F1 at conf ≥ .5: weak scores 1,1,2/3,0,0,1 then 0 on each truck frame; good scores 1.
    const weakF1 = [1, 1, 2 / 3, 0, 0, 1, ...Array(10).fill(0)];
    expect(res.body.paired).toEqual(
      pairedSignificance(Array(16).fill(1), weakF1, { nBoot: 500, nPerm: 2000, seed: 12345, alpha: 0.05 }),
    );
    const again = await api('POST', '/api/evalgov/stats/significance', ctx.token.annotator, body);
    const strip = (b: any) => ({ ...b, operation_id: undefined });
    expect(strip(again.body)).toEqual(strip(res.body));
    const other = await api('POST', '/api/evalgov/stats/significance', ctx.token.annotator, {
      ...body,
      seed: 7,
    });
    expect(other.body.map_difference).not.toEqual(res.body.map_difference);
    const pairs = await api('GET', `/api/evalgov/pairs?gold_id=${goldId}&slice_id=all`, ctx.token.annotator);
    expect(pairs.body.items[0].significance).toMatchObject({
      operation_id: other.body.operation_id,
      better_by_map: 'ext-good@1',
    });
    const same = await api('POST', '/api/evalgov/stats/significance', ctx.token.annotator, {
      ...body,
      run_b: goodRun,
    });
    expect(same.status).toBe(422);
  });

  it('answers the bootstrap interval core computes, the same for the same seed, recorded', async () => {
    const values = [0.61, 0.72, 0.55, 0.9, 0.83, 0.47, 0.66, 0.71, 0.58, 0.79];
    const res = await api('POST', '/api/evalgov/stats/bootstrap', ctx.token.annotator, { values });
    expect(res.status).toBe(200);
    const core = bootstrapInterval(values, { alpha: 0.05, nBoot: 2000, seed: 12345 });
    expect(res.body).toMatchObject({
      mean: core.mean,
      lo: core.lo,
      hi: core.hi,
      n_boot: 2000,
      seed: 12345,
      alpha: 0.05,
    });
    const again = await api('POST', '/api/evalgov/stats/bootstrap', ctx.token.annotator, { values });
    expect([again.body.lo, again.body.hi]).toEqual([res.body.lo, res.body.hi]);
    const seeded = await api('POST', '/api/evalgov/stats/bootstrap', ctx.token.annotator, {
      values,
      seed: 99,
      n_boot: 500,
      alpha: 0.1,
    });
    const core99 = bootstrapInterval(values, { alpha: 0.1, nBoot: 500, seed: 99 });
    expect([seeded.body.lo, seeded.body.hi]).toEqual([core99.lo, core99.hi]);
    const op = await db().evalOperation.findUniqueOrThrow({ where: { id: res.body.operation_id } });
    expect(op).toMatchObject({ opType: 'bootstrap', params: expect.objectContaining({ n: 10, values }) });
    for (const bad of [
      { values: [] },
      { values: [1, 'x'] },
      { values: [1], n_boot: 10 },
      { values: [1], alpha: 1 },
      { values: [1], seed: -1 },
      { values: [1], extra: 1 },
      { values: Array(20_000).fill(1), n_boot: 2000 },
      { values: Array(100_001).fill(1), n_boot: 100 },
    ]) {
      const r = await api('POST', '/api/evalgov/stats/bootstrap', ctx.token.annotator, bad);
      expect({ bad: Object.keys(bad), status: r.status }).toEqual({ bad: Object.keys(bad), status: 422 });
      expect(r.headers.get('content-type')).toMatch(/problem\+json/);
    }
  });
});

describe('safety recall', () => {
  it('flags a safety class under its floor and passes one over it', async () => {
    const res = await api('POST', '/api/evalgov/safety/recall', ctx.token.annotator, {
      run_id: weakRun,
      gold_id: goldId,
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      passed: false,
      failing: ['pedestrian'],
      safety_l1: ['vru', 'animal', 'two_wheeler'],
    });
    const byName = Object.fromEntries(res.body.classes.map((c: any) => [c.class_name, c]));
    expect(byName.pedestrian).toMatchObject({
      recall: 1 / 3,
      floor: 0.9,
      floor_from: 'default',
      passed: false,
    });
    const w = wilsonInterval(1, 3);
    expect(byName.pedestrian.recall_ci).toEqual({ lo: w.lo, hi: w.hi });
    // M5 at conf .5 counts at the default operating point .5.
    expect(byName.motorcycle).toMatchObject({ recall: 1, passed: true });
    expect(byName.car).toBeUndefined();
    const lowered = await api('POST', '/api/evalgov/safety/recall', ctx.token.annotator, {
      run_id: weakRun,
      gold_id: goldId,
      floors: { by_class: { pedestrian: 0.3 }, by_l1: { two_wheeler: 0.95 } },
    });
    expect(lowered.body).toMatchObject({ passed: true, failing: [] });
    const stricter = await api('POST', '/api/evalgov/safety/recall', ctx.token.annotator, {
      run_id: weakRun,
      gold_id: goldId,
      conf_thr: 0.6,
      floors: { by_class: { pedestrian: 0.3 } },
    });
    expect(stricter.body).toMatchObject({ passed: false, failing: ['motorcycle'] });
    const good = await api('POST', '/api/evalgov/safety/recall', ctx.token.annotator, {
      run_id: goodRun,
      gold_id: goldId,
    });
    expect(good.body.passed).toBe(true);
    const notSafety = await api('POST', '/api/evalgov/safety/recall', ctx.token.annotator, {
      run_id: weakRun,
      gold_id: goldId,
      floors: { by_class: { car: 0.5 } },
    });
    expect(notSafety.status).toBe(422);
    expect(notSafety.body.errors[0].field).toBe('body.floors.by_class.car');
  });
});

describe('shadow triage', () => {
  it('ranks the frame with the most disagreement first', async () => {
    const res = await api('POST', '/api/evalgov/shadow/triage', ctx.token.annotator, {
      champion_run_id: goodRun,
      challenger_run_id: weakRun,
      limit: 5,
    });
    expect(res.status).toBe(200);
    // f3: the champion's car A3 (.9) is missing and the challenger's false car (.85) is extra.
    expect(res.body.frames[0]).toMatchObject({
      frame_id: frameIds[3],
      by_kind: { only_champion: 1, only_challenger: 1, class: 0, confidence: 0 },
    });
    expect(res.body.frames[0].score).toBeCloseTo(1.75, 12);
    expect(res.body.frames).toHaveLength(5);
    expect(res.body).toMatchObject({ frames_compared: 16, frames_with_disagreement: 13 });
    const f0 = await api('POST', '/api/evalgov/shadow/triage', ctx.token.annotator, {
      champion_run_id: goodRun,
      challenger_run_id: weakRun,
      frame_ids: [frameIds[0], frameIds[1]],
    });
    expect(f0.body).toMatchObject({ frames_compared: 2, frames_with_disagreement: 0, frames: [] });
    const missing = await api('POST', '/api/evalgov/shadow/triage', ctx.token.annotator, {
      champion_run_id: goodRun,
      challenger_run_id: weakRun,
      frame_ids: ['00000000-0000-4000-8000-000000000000'],
    });
    expect(missing.status).toBe(404);
  });
});

describe('refusals', () => {
  it('refuses a reconstructed run by name everywhere AP is computed, and writes nothing', async () => {
    const rec = await api('POST', '/api/inference-runs', ctx.token.reviewer, {
      mode: 'reconstruct',
      session_id: sessionId,
    });
    expect(rec.status).toBe(201);
    const recId = rec.body.id;
    const ops = await db().evalOperation.count();
    for (const [path, body] of [
      ['/api/evalgov/evaluate', { run_id: recId, gold_id: goldId }],
      ['/api/evalgov/stats/significance', { run_a: goodRun, run_b: recId, gold_id: goldId }],
      ['/api/evalgov/safety/recall', { run_id: recId, gold_id: goldId }],
      ['/api/evalgov/shadow/triage', { champion_run_id: goodRun, challenger_run_id: recId }],
    ] as const) {
      const res = await api('POST', path, ctx.token.annotator, body);
      expect({ path, status: res.status }).toEqual({ path, status: 422 });
      expect(res.body.detail).toMatch(/reconstructed/);
      expect(res.body.reason).toBe('reconstructed');
    }
    expect(await db().evalOperation.count()).toBe(ops);
  });

  it('answers bad input with a clear 4xx and records nothing', async () => {
    const ops = await db().evalOperation.count();
    const cases: Array<[string, unknown, number]> = [
      ['/api/evalgov/evaluate', { run_id: 'nope', gold_id: goldId }, 422],
      ['/api/evalgov/evaluate', { run_id: weakRun }, 422],
      ['/api/evalgov/evaluate', { run_id: '00000000-0000-4000-8000-000000000000', gold_id: goldId }, 404],
      ['/api/evalgov/evaluate', { run_id: weakRun, gold_id: '00000000-0000-4000-8000-000000000000' }, 404],
      // An unknown slice after a valid one: nothing of the request is recorded.
      [
        '/api/evalgov/evaluate',
        { run_id: weakRun, gold_id: goldId, slice_ids: [rainSlice, '00000000-0000-4000-8000-000000000000'] },
        404,
      ],
      ['/api/evalgov/evaluate', { run_id: weakRun, gold_id: goldId, iou_thr: 0 }, 422],
      [
        '/api/evalgov/stats/significance',
        { run_a: goodRun, run_b: weakRun, gold_id: goldId, n_perm: 0 },
        422,
      ],
      [
        '/api/evalgov/safety/recall',
        { run_id: weakRun, gold_id: goldId, floors: { by_l1: { vehicle: 0.5 } } },
        422,
      ],
      ['/api/evalgov/shadow/triage', { champion_run_id: goodRun, challenger_run_id: goodRun }, 422],
    ];
    for (const [path, body, status] of cases) {
      const res = await api('POST', path, ctx.token.annotator, body);
      expect({ path, body, status: res.status }).toEqual({ path, body, status });
      expect(res.headers.get('content-type')).toMatch(/problem\+json/);
    }
    expect(await db().evalOperation.count()).toBe(ops);
    for (const path of [
      '/api/evalgov/matrix?gold_id=x',
      '/api/evalgov/pairs?slice_id=nope',
      '/api/evalgov/hierarchical',
      '/api/evalgov/model/ext-weak@1/evals?limit=0',
      '/api/evalgov/blind-audit/not-a-uuid',
    ])
      expect({ path, status: (await api('GET', path, ctx.token.annotator)).status }).toEqual({
        path,
        status: 422,
      });
    expect(
      (await ctx.api.call('POST', '/api/evalgov/stats/bootstrap', { body: { values: [1] } })).status,
    ).toBe(401);
  });
});

describe('blind audits', () => {
  let auditId: string;
  let items: any[];

  beforeAll(async () => {
    // Auto-accepted cars beside the human ones (after sealing: gold frames must be human-verified).
    for (let i = 6; i < 12; i++)
      await db().annoObject.create({
        data: {
          frameId: frameIds[i]!,
          bbox: [300, 50, 400, 150],
          classId: classId.car!,
          conf: 0.81,
          source: 'auto_accept',
          state: 'auto_accept',
        },
      });
  });

  it('seeds a reproducible sample and hides sources from reviewers', async () => {
    const body = { name: 'cars', seed: 7, per_class: 5, classes: ['car'] };
    expect((await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.annotator, body)).status).toBe(403);
    const res = await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.reviewer, body);
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ items: 5, labeled: 0, remaining: 5, status: 'open' });
    expect(res.body.spec).toMatchObject({ candidates_by_class: { [String(classId.car)]: 10 }, per_class: 5 });
    auditId = res.body.id;
    const again = await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.reviewer, body);
    const idsOf = async (id: string) =>
      (await db().blindAuditItem.findMany({ where: { auditId: id }, orderBy: { objectId: 'asc' } })).map(
        (i) => i.objectId,
      );
    expect(await idsOf(again.body.id)).toEqual(await idsOf(auditId));

    const shown = await api('GET', `/api/evalgov/blind-audit/${auditId}`, ctx.token.reviewer);
    expect(shown.status).toBe(200);
    items = shown.body.items;
    expect(items).toHaveLength(5);
    for (const item of items) {
      expect(item).not.toHaveProperty('hidden');
      expect(item).not.toHaveProperty('source');
      expect(item).not.toHaveProperty('conf');
      expect(item).toMatchObject({
        class_name: 'car',
        verdict: null,
        object_deleted: false,
        object_changed: false,
      });
    }
    expect(JSON.stringify(shown.body.items)).not.toMatch(/auto_accept|"human"|0\.81/);
    for (const token of [ctx.token.annotator, ctx.token.reviewer])
      expect((await api('GET', `/api/evalgov/blind-audit/${auditId}?reveal=true`, token)).status).toBe(403);
    const revealed = await api('GET', `/api/evalgov/blind-audit/${auditId}?reveal=true`, ctx.token.admin);
    expect(revealed.status).toBe(200);
    // The sample draws from both sources (seed 7), so the score below has a precision for each.
    expect(new Set(revealed.body.items.map((i: any) => i.hidden.source))).toEqual(
      new Set(['human', 'auto_accept']),
    );
    for (const item of revealed.body.items)
      if (item.hidden.source === 'auto_accept')
        expect(item.hidden).toMatchObject({ conf: 0.81, state: 'auto_accept' });
    items = revealed.body.items;
    const list = await api('GET', '/api/evalgov/blind-audits?status=open', ctx.token.annotator);
    expect(list.body.items.map((a: any) => a.id)).toEqual(expect.arrayContaining([auditId, again.body.id]));
  });

  it('labels, estimates with the Wilson interval core computes, and scores per hidden source', async () => {
    const url = `/api/evalgov/blind-audit/${auditId}`;
    // Verdict: human cars correct, auto-accepted cars incorrect, so per-source precision is known.
    const verdictOf = (i: any) => (i.hidden.source === 'human' ? 'correct' : 'incorrect');
    const first = items.slice(0, 3).map((i) => ({ object_id: i.object_id, verdict: verdictOf(i) }));
    expect((await api('POST', `${url}/mark-labeled`, ctx.token.annotator, { verdicts: first })).status).toBe(
      403,
    );
    const marked = await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, { verdicts: first });
    expect(marked.status).toBe(200);
    const correct = first.filter((v) => v.verdict === 'correct').length;
    const est = await api('GET', `${url}/estimate`, ctx.token.annotator);
    expect(est.status).toBe(200);
    const w = wilsonInterval(correct, 3);
    expect(est.body).toMatchObject({ labeled: 3, remaining: 2, correct, precision: correct / 3 });
    expect(est.body.interval).toEqual({ lo: w.lo, hi: w.hi });
    expect(JSON.stringify(est.body)).not.toMatch(/auto_accept|by_source/);
    const item = await db().blindAuditItem.findFirstOrThrow({
      where: { auditId, objectId: first[0]!.object_id },
    });
    expect(item.labeledBy).not.toBeNull();

    const relabel = await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, { verdicts: [first[0]] });
    expect(relabel.status).toBe(409);
    expect(relabel.body.already_labeled).toEqual([first[0]!.object_id]);
    const flipped = first[0]!.verdict === 'correct' ? 'incorrect' : 'correct';
    const overwrite = await api('POST', `${url}/mark-labeled`, ctx.token.admin, {
      verdicts: [{ object_id: first[0]!.object_id, verdict: flipped }],
      overwrite: true,
    });
    expect(overwrite.status).toBe(200);
    const back = await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, {
      verdicts: [first[0]],
      overwrite: true,
    });
    expect(back.status).toBe(200);
    const stranger = await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, {
      verdicts: [{ object_id: '00000000-0000-4000-8000-000000000000', verdict: 'correct' }],
    });
    expect(stranger.status).toBe(404);
    const bad = await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, {
      verdicts: [{ object_id: first[0]!.object_id, verdict: 'maybe' }],
    });
    expect(bad.status).toBe(422);

    expect((await api('POST', `${url}/score`, ctx.token.reviewer, {})).status).toBe(409);
    const rest = items.slice(3).map((i) => ({ object_id: i.object_id, verdict: verdictOf(i) }));
    expect((await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, { verdicts: rest })).status).toBe(
      200,
    );
    const score = await api('POST', `${url}/score`, ctx.token.reviewer, {});
    expect(score.status).toBe(200);
    const humans = items.filter((i) => i.hidden.source === 'human').length;
    expect(score.body).toMatchObject({
      status: 'scored',
      labeled: 5,
      remaining: 0,
      correct: humans,
      partial: false,
    });
    const sources = Object.fromEntries(score.body.by_source.map((s: any) => [s.source, s]));
    expect(sources.human).toMatchObject({ precision: 1, labeled: humans });
    expect(sources.auto_accept).toMatchObject({ precision: 0, labeled: 5 - humans });
    const wHuman = wilsonInterval(humans, humans);
    expect(sources.human.interval).toEqual({ lo: wHuman.lo, hi: wHuman.hi });
    const wAll = wilsonInterval(humans, 5);
    expect(score.body.interval).toEqual({ lo: wAll.lo, hi: wAll.hi });
    const op = await db().evalOperation.findUniqueOrThrow({ where: { id: score.body.operation_id } });
    expect(op).toMatchObject({ opType: 'blind_audit_score', subjectIds: [auditId] });
    expect((await api('POST', `${url}/score`, ctx.token.reviewer, {})).status).toBe(409);
    expect((await api('POST', `${url}/mark-labeled`, ctx.token.reviewer, { verdicts: rest })).status).toBe(
      409,
    );
    const shown = await api('GET', url, ctx.token.annotator);
    expect(shown.body).toMatchObject({ status: 'scored', labeled: 5 });
    expect(shown.body.items[0]).not.toHaveProperty('hidden');
  });

  it('refuses unknown audits, classes and empty samples', async () => {
    const missing = '00000000-0000-4000-8000-000000000000';
    expect((await api('GET', `/api/evalgov/blind-audit/${missing}`, ctx.token.annotator)).status).toBe(404);
    expect(
      (await api('GET', `/api/evalgov/blind-audit/${missing}/estimate`, ctx.token.annotator)).status,
    ).toBe(404);
    expect(
      (await api('POST', `/api/evalgov/blind-audit/${missing}/score`, ctx.token.reviewer, {})).status,
    ).toBe(404);
    const audits = await db().blindAudit.count();
    for (const body of [
      { name: 'x', classes: ['no_such_class'] },
      { name: 'x', classes: ['elephant'] },
      { name: 'x', predicate: { l1: ['nonsense'] } },
      { name: 'x', slice_id: rainSlice, predicate: {} },
      { name: 'x', per_class: 0 },
    ]) {
      const res = await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.reviewer, body);
      expect({ body, status: res.status }).toEqual({ body, status: 422 });
    }
    expect(
      (
        await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.reviewer, {
          name: 'x',
          slice_id: missing,
        })
      ).status,
    ).toBe(404);
    expect(await db().blindAudit.count()).toBe(audits);
    const bySlice = await api('POST', '/api/evalgov/blind-audit/seed', ctx.token.reviewer, {
      name: 'rain',
      slice_id: rainSlice,
      per_class: 1,
    });
    expect(bySlice.status).toBe(201);
    // Rain frames hold a car, two pedestrians and a motorcycle: one of each class.
    expect(bySlice.body.items).toBe(3);
  });
});

describe('POST /api/hardening/reproducible', () => {
  const check = (body: unknown, token = ctx.token.reviewer) =>
    api('POST', '/api/hardening/reproducible', token, body);

  it('computes an evaluation again, whole and sliced, finds it the same, and names a figure that no longer matches', async () => {
    const res = await evaluate(weakRun);
    const [whole, rain] = res.body.evaluations;
    for (const e of [whole, rain]) {
      const again = await check({ evaluation_id: e.operation_id });
      expect([again.status, again.body.detail]).toEqual([200, undefined]);
      expect(again.body).toMatchObject({ reproduced: true, differences: [], differences_total: 0 });
      expect(again.body.subject).toMatchObject({
        kind: 'evaluation',
        id: e.operation_id,
        slice_id: e.slice_id,
      });
      expect(again.body.now.map).toBeCloseTo(e.map, 12);
    }
    // A stored figure altered after the fact is exactly what the check must catch.
    const op = await db().evalOperation.findUniqueOrThrow({ where: { id: whole.operation_id } });
    await db().evalOperation.update({
      where: { id: op.id },
      data: { result: { ...(op.result as object), map: 0.99 } },
    });
    const tampered = await check({ evaluation_id: whole.operation_id });
    expect(tampered.body.reproduced).toBe(false);
    expect(tampered.body.differences).toEqual([{ path: 'map', original: 0.99, now: whole.map }]);
    const recorded = await db().governanceRun.findUniqueOrThrow({ where: { id: tampered.body.check_id } });
    expect(recorded).toMatchObject({ kind: 'reproducible', status: 'completed' });
  });

  it('refuses what it cannot check, by name', async () => {
    expect((await check({})).status).toBe(422);
    expect((await check({ evaluation_id: goodRun, commit_id: 'a'.repeat(64) })).status).toBe(422);
    expect((await check({ evaluation_id: '00000000-0000-4000-8000-000000000000' })).status).toBe(404);
    expect((await check({ commit_id: 'b'.repeat(64) })).status).toBe(404);
    expect((await check({ evaluation_id: goodRun }, ctx.token.annotator)).status).toBe(403);
  });
});

import { randomUUID } from 'node:crypto';
import { decidePromotion, refusePromotion, type PromotionRequest } from '../activities/registry/gate';
import type { Frame } from '../generated/prisma/client';
import type { StreamEvent } from '../runtime/event-hub';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Gate-directed runs on the real PostgreSQL (docs/flywheel-gate-directed.md), made by the gate's own
 * decision activity: its evaluation is CPU work over stored predictions, so the runs it compares are
 * imported ones (no GPU inference) on a sealed gold set.
 *
 * The gold set: 4 frames, a human car on each and a human pedestrian (a safety class, l1 vru) on
 * frames 2 and 3. The champion's run finds every box. Challengers: `worse` finds only the cars of
 * frames 0 and 1, `no-ped` every car but no pedestrian, `same` exactly what the champion finds.
 * A second session, 4 frames of machine cars (pedestrians on 2 and 3) auto-accepted at 0.6, is the
 * pool the dispatched batches pick from.
 */
const ctx = useApiForFile();
const db = () => ctx.api.deps.db;
let goldFrames: Frame[];
let goldId: string;
let reviewerId: string;
let classes: Map<string, number>;
const runs: Record<string, string> = {};

const CAR = [5, 5, 30, 30];
const PEDESTRIAN = [35, 10, 60, 40];

beforeAll(async () => {
  const deps = ctx.api.deps;
  classes = new Map((await deps.db.ontologyClass.findMany()).map((c) => [c.name, c.id]));
  const context = () => ({
    exposure: { mean_luma: 120 },
    weather: 'clear',
    time_of_day: 'day',
    road_type: 'urban',
  });
  const gold = await createSessionFixture(deps, { frames: 4, storeImages: false, context });
  goldFrames = gold.frames;
  const box = (frame: Frame, className: string, bbox: number[], source: string, state: string) => ({
    id: randomUUID(),
    frameId: frame.id,
    bbox,
    classId: classes.get(className)!,
    source,
    state,
    conf: source === 'human' ? null : 0.6,
  });
  const pool = await createSessionFixture(deps, { frames: 4, storeImages: false, context });
  await deps.db.annoObject.createMany({
    data: [
      ...goldFrames.map((f) => box(f, 'car', CAR, 'human', 'accepted')),
      ...goldFrames.slice(2).map((f) => box(f, 'pedestrian', PEDESTRIAN, 'human', 'accepted')),
      ...pool.frames.map((f) => box(f, 'car', CAR, 'fused', 'auto_accept')),
      ...pool.frames.slice(2).map((f) => box(f, 'pedestrian', PEDESTRIAN, 'fused', 'auto_accept')),
    ],
  });
  const sealed = await ctx.api.call('POST', '/api/quality/gold/seal', {
    token: ctx.token.reviewer,
    body: { name: 'gate-directed', frame_ids: goldFrames.map((f) => f.id) },
  });
  expect(sealed.status).toBe(201);
  goldId = sealed.body.id;
  reviewerId = (await deps.db.user.findFirstOrThrow({ where: { role: 'reviewer' } })).id;

  await deps.db.model.createMany({
    data: [
      { modelVersion: 'det@1', name: 'champion', origin: 'registered', state: 'champion' },
      ...['worse@1', 'no-ped@1', 'same@1'].map((v) => ({ modelVersion: v, name: v, origin: 'registered' })),
    ],
  });
  const cars = (frames: Frame[]) =>
    frames.map((f) => ({ frameId: f.id, classId: classes.get('car')!, bbox: CAR }));
  const pedestrians = goldFrames
    .slice(2)
    .map((f) => ({ frameId: f.id, classId: classes.get('pedestrian')!, bbox: PEDESTRIAN }));
  const found = {
    'det@1': [...cars(goldFrames), ...pedestrians],
    'worse@1': cars(goldFrames.slice(0, 2)),
    'no-ped@1': cars(goldFrames),
    'same@1': [...cars(goldFrames), ...pedestrians],
  };
  for (const [version, predictions] of Object.entries(found)) {
    const run = await deps.db.inferenceRun.create({
      data: {
        modelVersion: version,
        status: 'completed',
        origin: 'imported',
        nPredictions: predictions.length,
      },
    });
    runs[version] = run.id;
    await deps.db.prediction.createMany({
      data: predictions.map((p) => ({ ...p, runId: run.id, conf: 0.9 })),
    });
  }
}, 120_000);

const call = (method: string, url: string, body?: unknown, token = ctx.token.reviewer) =>
  ctx.api.call(method, url, { token, body });

const goldRun = (version: string) => ({
  runId: runs[version]!,
  modelVersion: version,
  reused: true,
  reconstructed: false,
  workflowId: null,
});

function gateInput(challenger: string) {
  const request: PromotionRequest = {
    challengerVersion: challenger,
    goldId,
    challengerRunId: runs[challenger]!,
    championRunId: runs['det@1']!,
    sliceIds: [],
    actor: { userId: reviewerId, role: 'reviewer', requestId: `test-${challenger}` },
  };
  return {
    request,
    plan: { championVersion: 'det@1', challenger: goldRun(challenger), champion: goldRun('det@1') },
    workflowRunId: randomUUID(),
  };
}

/** The gate's own decision activity: evaluates both runs per slice, judges, records. */
const decide = (challenger: string) => decidePromotion(ctx.api.deps, gateInput(challenger));

interface Regression {
  slice: string;
  metric: string;
  drop: number;
  frames: number;
}
interface Run {
  run_id: string;
  promotion_id: string;
  state: string;
  targets: { metric: string; min_drop: number; regressions: Regression[]; safety_slices: string[] };
  cycle_id: string | null;
  cycle: {
    cycle_id: string;
    origin: string;
    evidence: unknown;
    allocations: Array<{ target: string; labels: number; fleet_samples: number; safety_floor: number }>;
    dispatch: { batches: Array<{ target: string; batch_id: string | null }> } | null;
    orders?: Array<{ target: string; samples: number; state: string }>;
  } | null;
  promotion: { rule: string; reasons: Array<{ rule: string }> };
}
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);
/** Run ids in creation order. */
const made: Record<string, string> = {};

describe('a refusal opens a run', () => {
  it('opens none for a refusal where the challenger fell short nowhere, or without slices', async () => {
    const same = await decide('same@1');
    expect(same).toMatchObject({ outcome: 'refused', rule: 'not_better' });
    const failed = gateInput('worse@1');
    await refusePromotion(ctx.api.deps, {
      ...failed,
      rule: 'run_failed',
      reason: 'the inference run failed',
    });
    expect(await db().gateDirectedRun.count()).toBe(0);
    const audit = await db().auditLog.findFirstOrThrow({ where: { subjectId: same.promotion_id } });
    expect(audit.detail).toMatchObject({ outcome: 'refused', gate_directed_run_id: null });
  });

  it('records the regressions and failing safety classes of a refusal with it', async () => {
    const refused = await decide('worse@1');
    expect(refused).toMatchObject({ outcome: 'refused', rule: 'safety_floor' });
    const run = await db().gateDirectedRun.findUniqueOrThrow({
      where: { promotionId: refused.promotion_id },
    });
    made.worse = run.id;
    expect(run).toMatchObject({
      challengerVersion: 'worse@1',
      championVersion: 'det@1',
      state: 'open',
      cycleId: null,
    });
    const targets = run.targets as unknown as Run['targets'];
    expect(targets).toMatchObject({ metric: 'map', min_drop: 0.01, safety_slices: ['class=pedestrian'] });
    // The whole set's mAP, and the AP of both classes: `worse` misses half the cars and every pedestrian.
    expect(targets.regressions.map((r) => [`${r.slice}:${r.metric}`, r.frames]).sort()).toEqual([
      ['all:map', 4],
      ['class=car:ap', 4],
      ['class=pedestrian:ap', 2],
    ]);
    expect(targets.regressions.find((r) => r.slice === 'class=pedestrian')!.drop).toBe(1);
    expect(targets.regressions.every((r) => r.drop >= 0.01)).toBe(true);
    const audit = await db().auditLog.findFirstOrThrow({ where: { subjectId: refused.promotion_id } });
    expect(audit.detail).toMatchObject({ gate_directed_run_id: run.id });

    const second = await decide('no-ped@1');
    made.noPed = (
      await db().gateDirectedRun.findUniqueOrThrow({ where: { promotionId: second.promotion_id } })
    ).id;
  });
});

describe('reading runs', () => {
  it('answers 401 without a token and 403 to an annotator materializing; annotators read', async () => {
    const id = made.worse!;
    for (const [method, url] of [
      ['GET', '/api/flywheel/gate-directed'],
      ['GET', `/api/flywheel/gate-directed/${id}`],
      ['POST', `/api/flywheel/gate-directed/${id}/materialize`],
    ] as const)
      expect({
        url,
        status: (await call(method, url, method === 'POST' ? {} : undefined, '')).status,
      }).toEqual({
        url,
        status: 401,
      });
    expect(
      (await call('POST', `/api/flywheel/gate-directed/${id}/materialize`, {}, ctx.token.annotator)).status,
    ).toBe(403);
    expect(
      (await call('GET', `/api/flywheel/gate-directed/${id}`, undefined, ctx.token.annotator)).status,
    ).toBe(200);
  });

  it('lists newest first by page, filters by state, answers one run with its refusal, 404 unknown', async () => {
    const first = await call('GET', '/api/flywheel/gate-directed?limit=1', undefined, ctx.token.annotator);
    expect(first.status).toBe(200);
    expect(first.body.items.map((r: Run) => r.run_id)).toEqual([made.noPed]);
    const next = await call(
      'GET',
      `/api/flywheel/gate-directed?limit=1&cursor=${first.body.next_cursor}`,
      undefined,
      ctx.token.annotator,
    );
    expect(next.body.items.map((r: Run) => r.run_id)).toEqual([made.worse]);
    expect(next.body.next_cursor).toBeNull();
    const open = await call('GET', '/api/flywheel/gate-directed?state=open', undefined, ctx.token.annotator);
    expect(open.body.items).toHaveLength(2);
    const none = await call(
      'GET',
      '/api/flywheel/gate-directed?state=materialized',
      undefined,
      ctx.token.annotator,
    );
    expect(none.body.items).toEqual([]);
    expect((await call('GET', '/api/flywheel/gate-directed?state=lost')).status).toBe(422);

    const one = await call('GET', `/api/flywheel/gate-directed/${made.worse}`);
    expect(one.body).toMatchObject({
      run_id: made.worse,
      challenger_version: 'worse@1',
      champion_version: 'det@1',
      state: 'open',
      cycle_id: null,
      cycle: null,
      materialized_by: null,
      materialized_at: null,
      promotion: { outcome: 'refused', rule: 'safety_floor', gold_id: goldId },
    });
    expect(one.body.promotion.reasons.map((r: { rule: string }) => r.rule)).toContain('safety_floor');
    expect((await call('GET', `/api/flywheel/gate-directed/${randomUUID()}`)).status).toBe(404);
    expect((await call('GET', '/api/flywheel/gate-directed/nope')).status).toBe(422);
  });
});

describe('materializing a run', () => {
  it('refuses safety floors above the budget with 422, leaving the run open and no cycle', async () => {
    const res = await call('POST', `/api/flywheel/gate-directed/${made.worse}/materialize`, {
      total_label_budget: 1,
      safety_floor: 5,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/safety_floor_exceeds_budget/);
    expect(await db().adaptiveCycle.count()).toBe(0);
    expect(await db().gateDirectedRun.findUniqueOrThrow({ where: { id: made.worse! } })).toMatchObject({
      state: 'open',
      cycleId: null,
    });
    const malformed = await call('POST', `/api/flywheel/gate-directed/${made.worse}/materialize`, {
      total_label_budget: 0,
    });
    expect(malformed.status).toBe(422);
    expect(malformed.body.errors.map((e: { field: string }) => e.field)).toContain('body.total_label_budget');
    expect((await call('POST', `/api/flywheel/gate-directed/${randomUUID()}/materialize`, {})).status).toBe(
      404,
    );
  });

  it('makes a gate cycle over the targets, dispatches it into batches and orders, once', async () => {
    const seen: StreamEvent[] = [];
    const unsubscribe = ctx.api.deps.events.subscribe('jobs', (e) => {
      if (e.type === 'flywheel.gate_directed.materialized') seen.push(e);
    });
    const run = (await db().gateDirectedRun.findUniqueOrThrow({ where: { id: made.worse! } }))
      .targets as unknown as Run['targets'];
    const res = await call('POST', `/api/flywheel/gate-directed/${made.worse}/materialize`, {
      total_label_budget: 4,
      total_fleet_samples: 10,
      safety_floor: 1,
    });
    expect(res.status).toBe(200);
    // The event is relayed through PostgreSQL NOTIFY: it arrives shortly after the answer.
    for (let i = 0; i < 50 && !seen.length; i++) await new Promise((r) => setTimeout(r, 100));
    unsubscribe();
    const body = res.body as Run;
    expect(body).toMatchObject({
      run_id: made.worse,
      state: 'materialized',
      cycle: { origin: 'gate', state: 'dispatched' },
    });
    expect(body.cycle_id).toBe(body.cycle!.cycle_id);
    expect(body.cycle!.evidence).toEqual({
      gate_directed_run_id: made.worse,
      promotion_id: body.promotion_id,
    });
    // The failing safety class is also a regression: its floor rides on that target. 3 labels left
    // after the floor and 10 samples by severity (all 2.99, pedestrian 2, car 1.98).
    const allocations = body.cycle!.allocations;
    expect(
      Object.fromEntries(allocations.map((a) => [a.target, [a.labels, a.fleet_samples, a.safety_floor]])),
    ).toEqual({
      'regression:all:map': [1, 4, 0],
      'regression:class=pedestrian:ap': [2, 3, 1],
      'regression:class=car:ap': [1, 3, 0],
    });
    expect(allocations.map((a) => a.target).sort()).toEqual(
      run.regressions.map((r) => `regression:${r.slice}:${r.metric}`).sort(),
    );
    expect(sum(allocations.map((a) => a.labels))).toBe(4);
    expect(sum(allocations.map((a) => a.fleet_samples))).toBe(10);

    const batches = body.cycle!.dispatch!.batches;
    expect(batches).toHaveLength(allocations.filter((a) => a.labels > 0).length);
    const batchIds = batches.flatMap((b) => (b.batch_id ? [b.batch_id] : []));
    expect(batchIds.length).toBeGreaterThan(0);
    expect(await db().activeLearnBatch.count({ where: { id: { in: batchIds } } })).toBe(batchIds.length);
    expect(body.cycle!.orders!.map((o) => o.state)).toEqual(
      allocations.filter((a) => a.fleet_samples > 0).map(() => 'proposed'),
    );
    expect(await db().fleetOrder.count({ where: { cycleId: body.cycle_id! } })).toBe(
      body.cycle!.orders!.length,
    );

    const audit = await db().auditLog.findFirstOrThrow({ where: { subjectId: made.worse! } });
    expect(audit).toMatchObject({ action: 'flywheel.gate_directed.materialize', actorId: reviewerId });
    expect(seen.map((e) => e.data)).toEqual([
      { run_id: made.worse, promotion_id: body.promotion_id, cycle_id: body.cycle_id, state: 'materialized' },
    ]);

    const read = await call(
      'GET',
      `/api/flywheel/gate-directed/${made.worse}`,
      undefined,
      ctx.token.annotator,
    );
    expect(read.body).toMatchObject({
      state: 'materialized',
      cycle_id: body.cycle_id,
      materialized_by: reviewerId,
      cycle: { cycle_id: body.cycle_id, state: 'dispatched', dispatch: { batches: expect.any(Array) } },
    });
    expect(read.body.materialized_at).not.toBeNull();
    const again = await call('POST', `/api/flywheel/gate-directed/${made.worse}/materialize`, {});
    expect(again.status).toBe(409);
    expect(again.body.detail).toMatch(/is materialized/);
    expect(await db().adaptiveCycle.count()).toBe(1);
  });

  it('lets one of two concurrent materializes through; the other is 409', async () => {
    const url = `/api/flywheel/gate-directed/${made.noPed}/materialize`;
    const both = await Promise.all([
      call('POST', url, { total_label_budget: 2 }),
      call('POST', url, { total_label_budget: 2 }),
    ]);
    expect(both.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(
      await db().adaptiveCycle.count({
        where: { evidence: { path: ['gate_directed_run_id'], equals: made.noPed! } },
      }),
    ).toBe(1);
    const materialized = await call(
      'GET',
      '/api/flywheel/gate-directed?state=materialized',
      undefined,
      ctx.token.annotator,
    );
    expect(materialized.body.items.map((r: Run) => r.run_id)).toEqual([made.noPed, made.worse]);
  });
});

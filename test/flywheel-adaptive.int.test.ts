import { randomUUID } from 'node:crypto';
import type { Frame } from '../generated/prisma/client';
import { useApiForFile } from '../testkit/api';
import { createSessionFixture } from '../testkit/session-fixtures';

/**
 * Adaptive flywheel cycles and fleet orders on the real PostgreSQL (docs/flywheel-adaptive.md).
 *
 * The corpus: one session of 4 frames, all normal light, clear, day, urban (so ODD discovery finds
 * no gap), each with one machine car auto-accepted at 0.6; frames 2 and 3 also hold a machine
 * pedestrian. No gate decision is recorded until the auto test records one.
 */
const ctx = useApiForFile();
let frames: Frame[];
let classes: Map<string, number>;

beforeAll(async () => {
  const deps = ctx.api.deps;
  const s = await createSessionFixture(deps, {
    frames: 4,
    storeImages: false,
    context: () => ({
      exposure: { mean_luma: 120 },
      weather: 'clear',
      time_of_day: 'day',
      road_type: 'urban',
    }),
  });
  frames = s.frames;
  classes = new Map((await deps.db.ontologyClass.findMany()).map((c) => [c.name, c.id]));
  const machine = (frame: Frame, className: string) => ({
    id: randomUUID(),
    frameId: frame.id,
    bbox: [10, 10, 50, 50],
    classId: classes.get(className)!,
    source: 'fused',
    state: 'auto_accept',
    conf: 0.6,
  });
  await deps.db.annoObject.createMany({
    data: [
      ...frames.map((f) => machine(f, 'car')),
      machine(frames[2]!, 'pedestrian'),
      machine(frames[3]!, 'pedestrian'),
    ],
  });
}, 120_000);

const call = (method: string, url: string, body?: unknown, token = ctx.token.reviewer) =>
  ctx.api.call(method, url, { token, body });

interface Allocation {
  target: string;
  kind: string;
  labels: number;
  fleet_samples: number;
  safety_floor: number;
  reason: string;
}
const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

const CYCLE = {
  regressions: [
    { slice: 'class=car', metric: 'ap', drop: 0.2, frames: 50 }, // severity 10
    { slice: 'weather=clear', metric: 'map', drop: 0.1, frames: 20 }, // severity 2
  ],
  odd_gaps: [{ clique: 'weather=rain|time_of_day=night', frames_short: 30 }], // severity 30
  total_label_budget: 5,
  total_fleet_samples: 42,
  safety_floor: 1,
  safety_slices: ['class=pedestrian'],
};

describe('who may call, and what is malformed', () => {
  it('answers 401 without a token and 403 to an annotator writing', async () => {
    expect((await call('POST', '/api/flywheel/adaptive/cycle', CYCLE, '')).status).toBe(401);
    expect((await call('GET', '/api/agent/fleet/orders', undefined, '')).status).toBe(401);
    for (const url of [
      '/api/flywheel/adaptive/cycle',
      '/api/flywheel/adaptive/dispatch',
      '/api/flywheel/adaptive/auto',
      '/api/agent/fleet/plan',
    ]) {
      const res = await call('POST', url, {}, ctx.token.annotator);
      expect({ url, status: res.status }).toEqual({ url, status: 403 });
    }
    expect((await call('GET', '/api/flywheel/adaptive/cycles', undefined, ctx.token.annotator)).status).toBe(
      200,
    );
  });

  it('refuses malformed bodies with 422 problem+json naming the field', async () => {
    const cases: Array<[unknown, string]> = [
      [{ ...CYCLE, total_label_budget: -1 }, 'body.total_label_budget'],
      [
        { ...CYCLE, regressions: [{ slice: 'all', metric: 'map', drop: 0, frames: 1 }] },
        'body.regressions.0.drop',
      ],
      [
        { ...CYCLE, regressions: [{ slice: 'all', metric: 'map', drop: 0.1, frames: 1, colour: 'red' }] },
        'body.regressions.0.colour',
      ],
      [{ ...CYCLE, odd_gaps: [{ clique: 'planet=mars', frames_short: 3 }] }, 'body.odd_gaps.0.clique'],
      [{ ...CYCLE, odd_gaps: [CYCLE.odd_gaps[0], CYCLE.odd_gaps[0]] }, 'body.odd_gaps.1'],
      [{ ...CYCLE, regressions: undefined }, 'body.regressions'],
    ];
    for (const [body, field] of cases) {
      const res = await call('POST', '/api/flywheel/adaptive/cycle', body);
      expect({ field, status: res.status }).toEqual({ field, status: 422 });
      expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
      expect(res.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
  });

  it('refuses safety floors above the budget, writing nothing', async () => {
    const res = await call('POST', '/api/flywheel/adaptive/cycle', { ...CYCLE, safety_floor: 6 });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/safety_floor_exceeds_budget/);
    expect(await ctx.api.deps.db.adaptiveCycle.count()).toBe(0);
  });
});

describe('auto without evidence', () => {
  it('refuses by name when there is no gate decision and no ODD gap', async () => {
    const res = await call('POST', '/api/flywheel/adaptive/auto', {
      total_label_budget: 2,
      total_fleet_samples: 10,
    });
    expect(res.status).toBe(422);
    expect(res.body.detail).toMatch(/^no_evidence: no gate decision/);
    expect(await ctx.api.deps.db.adaptiveCycle.count()).toBe(0);
  });
});

describe('a cycle, dispatched', () => {
  let cycleId: string;

  it('allocates safety first and by severity, summing to each budget, each allocation explained', async () => {
    const res = await call('POST', '/api/flywheel/adaptive/cycle', CYCLE);
    expect(res.status).toBe(201);
    cycleId = res.body.cycle_id;
    const by = Object.fromEntries(
      (res.body.allocations as Allocation[]).map((a) => [
        a.target,
        [a.labels, a.fleet_samples, a.safety_floor],
      ]),
    );
    // 4 labels after the floor: 30, 10, 2 of 42 → 2.86, 0.95, 0.19 → 2+1, 0+1, 0.
    expect(by).toEqual({
      'odd_gap:weather=rain|time_of_day=night': [3, 30, 0],
      'regression:class=car:ap': [1, 10, 0],
      'regression:weather=clear:map': [0, 2, 0],
      'safety:class=pedestrian': [1, 0, 1],
    });
    expect(sum(res.body.allocations.map((a: Allocation) => a.labels))).toBe(5);
    expect(sum(res.body.allocations.map((a: Allocation) => a.fleet_samples))).toBe(42);
    expect(res.body.allocations.find((a: Allocation) => a.kind === 'safety').reason).toMatch(
      /^safety floor 1 labels first/,
    );
    expect(res.body.state).toBe('planned');
  });

  it('dispatches: real batches routed to review, what could not be scoped said, orders proposed', async () => {
    const res = await call('POST', '/api/flywheel/adaptive/dispatch', { cycle_id: cycleId });
    expect(res.status).toBe(200);
    expect(res.body.state).toBe('dispatched');
    const batches = res.body.dispatch.batches as Array<{
      target: string;
      batch_id: string | null;
      picked: number;
      routed_objects: number;
      scope: { classes: string[] | null };
      not_scoped: string[];
      skipped: string | null;
    }>;
    const by = Object.fromEntries(batches.map((b) => [b.target, b]));
    expect(by['regression:class=car:ap']).toMatchObject({
      picked: 1,
      scope: { classes: ['car'] },
      skipped: null,
    });
    expect(by['safety:class=pedestrian']).toMatchObject({ picked: 1, scope: { classes: ['pedestrian'] } });
    const gap = by['odd_gap:weather=rain|time_of_day=night']!;
    expect(gap.batch_id).toBeNull();
    expect(gap.skipped).toMatch(/no frame carries these conditions/);
    expect(gap.not_scoped.join()).toMatch(/selection cannot filter frames by context/);
    const db = ctx.api.deps.db;
    const made = await db.activeLearnBatch.findMany({
      where: { id: { in: batches.flatMap((b) => (b.batch_id ? [b.batch_id] : [])) } },
      include: { frames: true },
    });
    expect(made).toHaveLength(2);
    const pedestrianBatch = made.find((m) => m.id === by['safety:class=pedestrian']!.batch_id)!;
    expect([frames[2]!.id, frames[3]!.id]).toContain(pedestrianBatch.frames[0]!.frameId);
    expect(await db.annoObject.count({ where: { state: 'review' } })).toBe(
      sum(batches.map((b) => b.routed_objects)),
    );
    expect(
      res.body.orders.map((o: { target: string; samples: number; state: string }) => [
        o.target,
        o.samples,
        o.state,
      ]),
    ).toEqual(
      expect.arrayContaining([
        ['weather=rain|time_of_day=night', 30, 'proposed'],
        ['class=car', 10, 'proposed'],
        ['weather=clear', 2, 'proposed'],
      ]),
    );
    expect(res.body.orders).toHaveLength(3);
    expect((await call('POST', '/api/flywheel/adaptive/dispatch', { cycle_id: cycleId })).status).toBe(409);
    expect(
      (await call('POST', '/api/flywheel/adaptive/collection-orders', { cycle_id: cycleId })).status,
    ).toBe(409);
  });

  it('turns another cycle into orders once, and lists cycles by page', async () => {
    const second = await call('POST', '/api/flywheel/adaptive/cycle', {
      ...CYCLE,
      safety_slices: null,
      safety_floor: 0,
    });
    const orders = await call('POST', '/api/flywheel/adaptive/collection-orders', {
      cycle_id: second.body.cycle_id,
    });
    expect(orders.status).toBe(201);
    expect(sum(orders.body.orders.map((o: { samples: number }) => o.samples))).toBe(42);
    expect(
      (await call('POST', '/api/flywheel/adaptive/collection-orders', { cycle_id: second.body.cycle_id }))
        .status,
    ).toBe(409);
    expect(
      (await call('POST', '/api/flywheel/adaptive/collection-orders', { cycle_id: randomUUID() })).status,
    ).toBe(404);
    const first = await call('GET', '/api/flywheel/adaptive/cycles?limit=1', undefined, ctx.token.annotator);
    expect(first.body.items.map((c: { cycle_id: string }) => c.cycle_id)).toEqual([second.body.cycle_id]);
    const next = await call(
      'GET',
      `/api/flywheel/adaptive/cycles?limit=1&cursor=${first.body.next_cursor}`,
      undefined,
      ctx.token.annotator,
    );
    expect(next.body.items.map((c: { cycle_id: string }) => c.cycle_id)).toEqual([cycleId]);
    expect(next.body.next_cursor).toBeNull();
    const dispatched = await call(
      'GET',
      '/api/flywheel/adaptive/cycles?state=dispatched',
      undefined,
      ctx.token.annotator,
    );
    expect(dispatched.body.items).toHaveLength(1);
  });
});

describe('fleet orders', () => {
  it('moves an order along its states, refuses an illegal move with 409, audits each move', async () => {
    const list = await call('GET', '/api/agent/fleet/orders?state=proposed', undefined, ctx.token.annotator);
    expect(list.status).toBe(200);
    const id = list.body.items[0].order_id as string;
    const move = (status: string, token = ctx.token.reviewer) =>
      call('POST', `/api/agent/fleet/orders/${id}/${status}`, { note: 'test' }, token);
    expect((await move('approved', ctx.token.annotator)).status).toBe(403);
    expect((await move('approved')).body.state).toBe('approved');
    const illegal = await move('fulfilled');
    expect(illegal.status).toBe(409);
    expect(illegal.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(illegal.body.detail).toMatch(/is approved: it cannot become fulfilled/);
    expect((await move('dispatched')).body.state).toBe('dispatched');
    expect((await move('fulfilled')).body.state).toBe('fulfilled');
    expect((await move('cancelled')).status).toBe(409);
    expect((await move('lost')).status).toBe(422);
    expect((await call('POST', `/api/agent/fleet/orders/${randomUUID()}/approved`, {})).status).toBe(404);
    const audit = await ctx.api.deps.db.auditLog.findMany({
      where: { subjectId: id },
      orderBy: { createdAt: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual([
      'fleet.order.approved',
      'fleet.order.dispatched',
      'fleet.order.fulfilled',
    ]);
    const fulfilled = await call(
      'GET',
      '/api/agent/fleet/orders?state=fulfilled',
      undefined,
      ctx.token.annotator,
    );
    expect(fulfilled.body.items.map((o: { order_id: string }) => o.order_id)).toEqual([id]);
  });

  it('plans from the latest cycle and ODD priority, orders proposed, unplaced samples said', async () => {
    const res = await call('POST', '/api/agent/fleet/plan', { samples: 10, cliques: 3 });
    expect(res.status).toBe(201);
    const kinds = res.body.orders.map((o: { kind: string }) => o.kind);
    // The latest cycle (no safety slice): the gap, car and clear orders.
    expect(kinds.sort()).toEqual(['odd_gap', 'regression', 'regression']);
    expect(
      res.body.orders.every(
        (o: { state: string; plan_id: string }) => o.state === 'proposed' && o.plan_id === res.body.plan_id,
      ),
    ).toBe(true);
    // Every frame has the same context: no clique is rare, so priority places none of the samples.
    expect(res.body.basis).toMatchObject({ unallocated_samples: 10, priority_orders: 0 });
    expect(res.body.basis.unallocated_reason).toMatch(/no priority clique scores above 0/);
    expect((await call('POST', '/api/agent/fleet/plan', { cycle_id: randomUUID() })).status).toBe(404);
  });
});

describe('auto with evidence', () => {
  it("computes a cycle from the latest gate decision's slices and dispatches it", async () => {
    const db = ctx.api.deps.db;
    const promotion = await db.promotion.create({
      data: {
        challengerVersion: 'det-v2',
        championVersion: 'det-v1',
        outcome: 'refused',
        rule: 'not_better',
        report: {
          slices: [
            {
              name: 'all',
              kind: 'all',
              frames: 4,
              delta: { map: -0.05, recall: 0.01 },
              classes: [{ class_id: classes.get('car'), gold: 4, delta_ap: -0.1 }],
            },
            { name: 'lighting=dark', kind: 'context', frames: 2, delta: { map: 0.02 }, classes: [] },
          ],
        },
      },
    });
    const res = await call('POST', '/api/flywheel/adaptive/auto', {
      total_label_budget: 2,
      total_fleet_samples: 6,
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      origin: 'auto',
      state: 'dispatched',
      evidence: { promotion_id: promotion.id, regressions: 2, odd_gaps: 0 },
    });
    expect(res.body.allocations.map((a: Allocation) => [a.target, a.labels, a.fleet_samples])).toEqual([
      ['regression:class=car:ap', 1, 4],
      ['regression:all:map', 1, 2],
    ]);
    expect(res.body.dispatch.batches).toHaveLength(2);
    expect(res.body.orders).toHaveLength(2);
  });
});

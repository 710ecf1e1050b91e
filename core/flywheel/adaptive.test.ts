import { ConflictError, RefusedError } from '../errors';
import { allocateCycle, batchScope, type AdaptiveRequest } from './adaptive';
import { checkOrderMove, ORDER_TRANSITIONS } from './adaptive-orders';

const base: AdaptiveRequest = {
  regressions: [
    { slice: 'weather=rain', metric: 'map', drop: 0.1, frames: 200 }, // severity 20
    { slice: 'class=pedestrian', metric: 'recall', drop: 0.05, frames: 200 }, // severity 10
  ],
  odd_gaps: [{ clique: 'time_of_day=night|weather=rain', frames_short: 10 }], // severity 10
  total_label_budget: 100,
  total_fleet_samples: 41,
  safety_floor: 0,
  safety_slices: null,
};

const sum = (xs: number[]) => xs.reduce((s, x) => s + x, 0);

describe('allocateCycle', () => {
  it('shares labels and samples by severity, each budget summing exactly', () => {
    const r = allocateCycle(base);
    expect(r.allocations.map((a) => [a.target, a.labels, a.fleet_samples])).toEqual([
      ['regression:weather=rain:map', 50, 21],
      ['odd_gap:time_of_day=night|weather=rain', 25, 10],
      ['regression:class=pedestrian:recall', 25, 10],
    ]);
    expect(sum(r.allocations.map((a) => a.labels))).toBe(100);
    expect(sum(r.allocations.map((a) => a.fleet_samples))).toBe(41);
    expect(r.allocations[0]!.reason).toMatch(/severity 20 .* 50 %/);
  });

  it('gives safety slices their floor first, then shares the rest', () => {
    const r = allocateCycle({
      ...base,
      total_label_budget: 37,
      safety_floor: 10,
      safety_slices: ['class=pedestrian', 'class=cyclist'],
    });
    const by = new Map(r.allocations.map((a) => [a.target, a]));
    // 17 left after 2 × 10: severities 20, 10, 10, 0 → 8.5, 4.25, 4.25, 0 → 9, 4, 4, 0 (ties by name).
    expect(by.get('regression:class=pedestrian:recall')).toMatchObject({ safety_floor: 10, labels: 14 });
    expect(by.get('safety:class=cyclist')).toMatchObject({
      kind: 'safety',
      safety_floor: 10,
      labels: 10,
      fleet_samples: 0,
    });
    expect(by.get('regression:weather=rain:map')!.labels).toBe(9);
    expect(by.get('odd_gap:time_of_day=night|weather=rain')!.labels).toBe(4);
    expect(r.safety_labels).toBe(20);
    expect(sum(r.allocations.map((a) => a.labels))).toBe(37);
    for (const a of r.allocations.filter((x) => x.slice.includes('class=')))
      expect(a.labels).toBeGreaterThanOrEqual(10);
  });

  it('puts a safety slice floor on one target only, even with two metrics on it', () => {
    const r = allocateCycle({
      ...base,
      regressions: [
        { slice: 'class=pedestrian', metric: 'map', drop: 0.1, frames: 10 },
        { slice: 'class=pedestrian', metric: 'recall', drop: 0.2, frames: 10 },
      ],
      odd_gaps: [],
      safety_floor: 5,
      safety_slices: ['class=pedestrian', 'class=pedestrian'],
    });
    expect(r.allocations.map((a) => a.safety_floor)).toEqual([5, 0]);
    expect(r.allocations[0]!.target).toBe('regression:class=pedestrian:recall');
    expect(sum(r.allocations.map((a) => a.labels))).toBe(100);
  });

  it('breaks ties the same way whatever the input order', () => {
    const tied: AdaptiveRequest = {
      ...base,
      regressions: [],
      odd_gaps: [
        { clique: 'weather=snow|road_type=urban', frames_short: 5 },
        { clique: 'weather=fog|road_type=urban', frames_short: 5 },
        { clique: 'weather=rain|road_type=urban', frames_short: 5 },
      ],
      total_label_budget: 4,
      total_fleet_samples: 1,
    };
    const a = allocateCycle(tied);
    const b = allocateCycle({ ...tied, odd_gaps: [...tied.odd_gaps].reverse() });
    expect(b.allocations).toEqual(a.allocations);
    expect(a.allocations.map((x) => [x.slice, x.labels, x.fleet_samples])).toEqual([
      ['weather=fog|road_type=urban', 2, 1],
      ['weather=rain|road_type=urban', 1, 0],
      ['weather=snow|road_type=urban', 1, 0],
    ]);
  });

  it('shares the rest equally among safety slices when there is nothing else', () => {
    const r = allocateCycle({
      ...base,
      regressions: [],
      odd_gaps: [],
      total_label_budget: 7,
      total_fleet_samples: 3,
      safety_floor: 2,
      safety_slices: ['class=cyclist', 'class=pedestrian'],
    });
    expect(r.allocations.map((a) => [a.slice, a.labels, a.fleet_samples])).toEqual([
      ['class=cyclist', 4, 2],
      ['class=pedestrian', 3, 1],
    ]);
  });

  it('refuses floors above the budget, and nothing to allocate to', () => {
    const over = () =>
      allocateCycle({ ...base, total_label_budget: 19, safety_floor: 10, safety_slices: ['a', 'b'] });
    expect(over).toThrow(RefusedError);
    expect(over).toThrow(/safety_floor_exceeds_budget: .* 20 labels, more than total_label_budget 19/);
    // Exactly the budget is allowed: all of it goes to the floors.
    const exact = allocateCycle({
      ...base,
      total_label_budget: 20,
      safety_floor: 10,
      safety_slices: ['a', 'b'],
    });
    expect(sum(exact.allocations.map((a) => a.labels))).toBe(20);
    expect(exact.allocations.filter((a) => a.kind !== 'safety').every((a) => a.labels === 0)).toBe(true);
    expect(() => allocateCycle({ ...base, regressions: [], odd_gaps: [] })).toThrow(/nothing to allocate/);
  });
});

describe('batchScope', () => {
  it('turns class parts into classes and ODD parts into conditions, and says what it cannot scope', () => {
    expect(batchScope({ slice: 'class=car|weather=rain', classes: ['truck'], session_ids: null })).toEqual({
      classes: ['car', 'truck'],
      session_ids: null,
      conditions: [{ attribute: 'weather', value: 'rain' }],
      not_scoped: [],
    });
    const curation = batchScope({ slice: 'slice night-highway', classes: null, session_ids: null });
    expect(curation.classes).toBeNull();
    expect(curation.not_scoped).toEqual([expect.stringMatching(/^slice night-highway: not a class/)]);
    expect(batchScope({ slice: 'all', classes: null, session_ids: null }).not_scoped).toEqual([]);
  });
});

describe('fleet order states', () => {
  it('allows the documented moves and refuses the others with 409', () => {
    expect(() => checkOrderMove('o', 'proposed', 'approved')).not.toThrow();
    expect(() => checkOrderMove('o', 'approved', 'dispatched')).not.toThrow();
    expect(() => checkOrderMove('o', 'dispatched', 'fulfilled')).not.toThrow();
    expect(() => checkOrderMove('o', 'proposed', 'fulfilled')).toThrow(ConflictError);
    expect(() => checkOrderMove('o', 'fulfilled', 'cancelled')).toThrow(/that state is final/);
    expect(() => checkOrderMove('o', 'cancelled', 'approved')).toThrow(ConflictError);
    for (const to of Object.values(ORDER_TRANSITIONS).flat()) expect(to).not.toBe('proposed');
  });
});

import { allocateCycle } from './adaptive';
import {
  gateDirectedRequest,
  gateDirectedTargets,
  gateRegressions,
  gateSafetySlices,
  type GateReading,
} from './gate-directed';

const names = new Map([
  [1, 'car'],
  [2, 'pedestrian'],
  [3, 'bus'],
]);
const reading: GateReading = { metric: 'map', min_drop: 0.01 };

/** A refused gate report: the shape activities/registry/gate.ts records. */
const report = {
  slices: [
    {
      name: 'all',
      kind: 'all',
      frames: 40,
      delta: { map: -0.05, recall: 0.02 },
      classes: [
        { class_id: 1, gold: 30, delta_ap: -0.2 },
        { class_id: 2, gold: 8, delta_ap: -0.005 }, // under min_drop: noise
        { class_id: 3, gold: 5, delta_ap: 0.1 }, // better
      ],
    },
    { name: 'lighting=dark', kind: 'context', frames: 10, delta: { map: -0.01 }, classes: [] },
    { name: 'weather=rain', kind: 'context', frames: 12, delta: { map: null }, classes: [] },
    { name: 'slice bridges', kind: 'slice', frames: 0, delta: { map: -0.3 }, classes: [] },
  ],
  safety: {
    passed: false,
    failing: [
      { class_name: 'pedestrian', under: ['recall'] },
      { class_name: 'child', under: ['ap'] },
    ],
  },
};
const refused = { outcome: 'refused', rule: 'safety_floor', report };

describe('gateRegressions', () => {
  it('reads slices whose figure fell by at least min_drop, and the whole set’s classes whose AP fell', () => {
    expect(gateRegressions(report, names, reading)).toEqual([
      { slice: 'all', metric: 'map', drop: 0.05, frames: 40 },
      { slice: 'class=car', metric: 'ap', drop: 0.2, frames: 30 },
      { slice: 'lighting=dark', metric: 'map', drop: 0.01, frames: 10 },
    ]);
  });

  it('reads the configured figure and threshold', () => {
    expect(gateRegressions(report, names, { metric: 'map', min_drop: 0.06 })).toEqual([
      { slice: 'class=car', metric: 'ap', drop: 0.2, frames: 30 },
    ]);
    expect(gateRegressions(report, names, { metric: 'recall', min_drop: 0.001 })).toEqual([
      { slice: 'class=car', metric: 'ap', drop: 0.2, frames: 30 },
      { slice: 'class=pedestrian', metric: 'ap', drop: 0.005, frames: 8 },
    ]);
  });

  it('reads per-class drops of the whole set only, and of classes the ontology names', () => {
    const r = {
      slices: [
        { name: 'lighting=dark', frames: 3, delta: {}, classes: [{ class_id: 1, gold: 3, delta_ap: -0.5 }] },
        {
          name: 'all',
          frames: 3,
          delta: {},
          classes: [
            { class_id: 99, gold: 3, delta_ap: -0.5 },
            { class_id: 1, gold: 0, delta_ap: -0.5 },
          ],
        },
      ],
    };
    expect(gateRegressions(r, names, reading)).toEqual([]);
  });

  it('skips the malformed parts of a report and reads the rest', () => {
    const r = {
      slices: [
        'nonsense',
        { name: 'lighting=dark', frames: 'ten', delta: { map: -0.5 } },
        { name: 'weather=rain', frames: 4, delta: { map: '-0.5' } },
        {
          name: 'all',
          frames: 4,
          delta: { map: -0.02 },
          classes: [{ class_id: 'car' }, null, { class_id: 1, gold: 2, delta_ap: -0.1 }],
        },
        { name: 'lighting=bright', frames: 2, delta: { map: -0.03 }, classes: 'none' },
      ],
    };
    expect(gateRegressions(r, names, reading)).toEqual([
      { slice: 'all', metric: 'map', drop: 0.02, frames: 4 },
      { slice: 'class=car', metric: 'ap', drop: 0.1, frames: 2 },
      { slice: 'lighting=bright', metric: 'map', drop: 0.03, frames: 2 },
    ]);
    for (const nothing of [null, undefined, 42, 'x', {}, { slices: 'all' }, []])
      expect(gateRegressions(nothing, names, reading)).toEqual([]);
  });
});

describe('gateSafetySlices', () => {
  it('names each failing safety class once, as class=<name>, in order', () => {
    expect(gateSafetySlices(report)).toEqual(['class=child', 'class=pedestrian']);
    expect(
      gateSafetySlices({
        safety: { failing: [{ class_name: 'cyclist' }, { class_name: 'cyclist' }, { under: [] }, 7] },
      }),
    ).toEqual(['class=cyclist']);
  });

  it('finds none without a safety verdict', () => {
    for (const r of [
      {},
      { safety: null },
      { safety: { failing: 'all' } },
      { safety: { passed: true, failing: [] } },
    ])
      expect(gateSafetySlices(r)).toEqual([]);
  });
});

describe('gateDirectedTargets', () => {
  it('is the reading, its regressions and the failing safety slices of a refusal', () => {
    expect(gateDirectedTargets(refused, names, reading)).toEqual({
      metric: 'map',
      min_drop: 0.01,
      regressions: gateRegressions(report, names, reading),
      safety_slices: ['class=child', 'class=pedestrian'],
    });
  });

  it('opens a run for safety classes alone, or regressions alone', () => {
    const safetyOnly = { ...refused, report: { slices: [], safety: report.safety } };
    expect(gateDirectedTargets(safetyOnly, names, reading)).toMatchObject({
      regressions: [],
      safety_slices: ['class=child', 'class=pedestrian'],
    });
    const regressionsOnly = { ...refused, report: { slices: report.slices } };
    expect(gateDirectedTargets(regressionsOnly, names, reading)?.safety_slices).toEqual([]);
  });

  it('opens none with nothing to collect for', () => {
    const better = {
      outcome: 'refused',
      rule: 'not_better',
      report: {
        slices: [
          { name: 'all', frames: 4, delta: { map: 0 }, classes: [{ class_id: 1, gold: 4, delta_ap: 0 }] },
        ],
        safety: { passed: true, failing: [] },
      },
    };
    expect(gateDirectedTargets(better, names, reading)).toBeNull();
  });

  it('opens none for a promotion, a champion that changed, or a refusal without slices', () => {
    expect(gateDirectedTargets({ ...refused, outcome: 'promoted', rule: null }, names, reading)).toBeNull();
    expect(gateDirectedTargets({ ...refused, rule: 'champion_changed' }, names, reading)).toBeNull();
    // run_failed and reconstructed_run record no per-slice comparison, even beside a safety verdict.
    const noSlices = { gold_id: 'g', runs: {}, safety: report.safety };
    expect(
      gateDirectedTargets({ ...refused, rule: 'run_failed', report: noSlices }, names, reading),
    ).toBeNull();
    expect(gateDirectedTargets({ ...refused, report: null }, names, reading)).toBeNull();
  });
});

describe('gateDirectedRequest', () => {
  it('is an adaptive request over the targets, safety slices carrying the floor', () => {
    const targets = gateDirectedTargets(refused, names, reading)!;
    const req = gateDirectedRequest(targets, {
      total_label_budget: 20,
      total_fleet_samples: 9,
      safety_floor: 2,
    });
    expect(req).toEqual({
      regressions: targets.regressions,
      odd_gaps: [],
      total_label_budget: 20,
      total_fleet_samples: 9,
      safety_floor: 2,
      safety_slices: ['class=child', 'class=pedestrian'],
    });
    const result = allocateCycle(req);
    expect(result.safety_labels).toBe(4);
    expect(result.allocations.map((a) => a.target).sort()).toEqual([
      'regression:all:map',
      'regression:class=car:ap',
      'regression:lighting=dark:map',
      'safety:class=child',
      'safety:class=pedestrian',
    ]);
  });

  it('has no safety slices when none failed', () => {
    const targets = {
      ...reading,
      regressions: [{ slice: 'all', metric: 'map', drop: 0.1, frames: 4 }],
      safety_slices: [],
    };
    expect(
      gateDirectedRequest(targets, { total_label_budget: 1, total_fleet_samples: 0, safety_floor: 5 })
        .safety_slices,
    ).toBeNull();
  });
});

import { healthGate, INSPECTOR_VERSION, isInspectorVersion, type GateOverride, type GateRow } from './gate';

let seq = 0;
const row = (indexerVersion: string, passed: boolean, at: number): GateRow => ({
  id: `r${++seq}`,
  indexerVersion,
  passed,
  score: passed ? 1 : 0.4,
  createdAt: new Date(at),
});
const override = (quarantined: boolean, at: number): GateOverride => ({
  id: `o${++seq}`,
  quarantined,
  reason: 'checked by hand',
  actorId: null,
  createdAt: new Date(at),
});

describe('healthGate', () => {
  it('reads the newest row of the inspector version', () => {
    const d = healthGate(
      [row(INSPECTOR_VERSION, false, 1), row(INSPECTOR_VERSION, true, 2)],
      INSPECTOR_VERSION,
    );
    expect(d).toMatchObject({ verdict: 'passed', quarantined: false, decidedBy: 'inspector' });
    expect(d.row?.createdAt.getTime()).toBe(2);
  });

  it('never lets a newer passing row of another writer lift a quarantine', () => {
    const rows = [
      row(INSPECTOR_VERSION, false, 1),
      row('lidar-indexer@3', true, 5),
      row('inspector-fork@1', true, 6),
    ];
    expect(healthGate(rows, INSPECTOR_VERSION)).toMatchObject({ verdict: 'failed', quarantined: true });
  });

  it('ignores rows of an older inspector version', () => {
    expect(healthGate([row('inspector@0', false, 9)], INSPECTOR_VERSION)).toMatchObject({
      verdict: 'uninspected',
      quarantined: false,
      decidedBy: 'none',
    });
  });

  it('lets a newer admin override decide, and a later inspector row decide again', () => {
    const failing = row(INSPECTOR_VERSION, false, 1);
    expect(healthGate([failing], INSPECTOR_VERSION, [override(false, 2)])).toMatchObject({
      verdict: 'passed',
      quarantined: false,
      decidedBy: 'override',
    });
    expect(
      healthGate([failing, row(INSPECTOR_VERSION, false, 3)], INSPECTOR_VERSION, [override(false, 2)]),
    ).toMatchObject({ quarantined: true, decidedBy: 'inspector' });
    // An older override does not outrank the row.
    expect(
      healthGate([row(INSPECTOR_VERSION, true, 4)], INSPECTOR_VERSION, [override(true, 2)]),
    ).toMatchObject({ quarantined: false, decidedBy: 'inspector' });
  });

  it('reads order from timestamps, not array position', () => {
    const d = healthGate(
      [row(INSPECTOR_VERSION, true, 7), row(INSPECTOR_VERSION, false, 3)],
      INSPECTOR_VERSION,
    );
    expect(d.verdict).toBe('passed');
  });
});

describe('isInspectorVersion', () => {
  it('reserves the inspector@ family', () => {
    expect(isInspectorVersion('inspector@1')).toBe(true);
    expect(isInspectorVersion('inspector@99')).toBe(true);
    expect(isInspectorVersion('lidar-indexer@1')).toBe(false);
  });
});

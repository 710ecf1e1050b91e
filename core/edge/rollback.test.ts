import { deviceState, rollbackAssignments, stageDecision } from './rollback';

describe('rollout decisions', () => {
  it('rolls back on a breach at any check, and at the end of a stage on anything but a pass', () => {
    expect(stageDecision('breach', false)).toBe('rollback');
    expect(stageDecision('insufficient', false)).toBe('wait');
    expect(stageDecision('pass', false)).toBe('wait');
    expect(stageDecision('pass', true)).toBe('advance');
    expect(stageDecision('insufficient', true)).toBe('rollback');
    expect(stageDecision('breach', true)).toBe('rollback');
  });

  it('restores only devices of the snapshot still carrying the rolled-back artifact', () => {
    const previous = { d1: 'old', d2: null, d3: 'old', d4: 'new' };
    const current = [
      { id: 'd1', assignedArtifactId: 'new' }, // reached: back to old
      { id: 'd2', assignedArtifactId: 'new' }, // reached, had nothing: back to nothing
      { id: 'd3', assignedArtifactId: 'old' }, // not reached yet: unchanged
      { id: 'd4', assignedArtifactId: 'new' }, // already ran it before the rollout
      { id: 'd5', assignedArtifactId: 'new' }, // joined after the snapshot
    ];
    expect(rollbackAssignments(previous, current, 'new')).toEqual([
      { deviceId: 'd1', artifactId: 'old' },
      { deviceId: 'd2', artifactId: null },
    ]);
  });

  it('shows a device offline once it has been silent past the limit', () => {
    const now = new Date('2030-01-01T00:01:00Z');
    expect(deviceState(null, false, now, 30)).toBe('registered');
    expect(deviceState(new Date('2030-01-01T00:00:45Z'), false, now, 30)).toBe('online');
    expect(deviceState(new Date('2030-01-01T00:00:45Z'), true, now, 30)).toBe('failing');
    expect(deviceState(new Date('2030-01-01T00:00:00Z'), false, now, 30)).toBe('offline');
  });
});

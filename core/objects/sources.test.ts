import { isMachineSource, MACHINE_SOURCE_SPELLINGS, normaliseSource, OBJECT_SOURCES } from './sources';

describe('object sources', () => {
  it('maps legacy spellings onto the enumeration', () => {
    expect(normaliseSource('interp')).toBe('interpolated');
    expect(normaliseSource('interpolated')).toBe('interpolated');
    expect(normaliseSource('auto_accept')).toBe('fused');
    expect(normaliseSource('banana')).toBeNull();
    for (const s of OBJECT_SOURCES) expect(s.length).toBeLessThanOrEqual(16);
  });

  it('never counts human or imported work as machine-source', () => {
    expect(isMachineSource('human')).toBe(false);
    expect(isMachineSource('imported')).toBe(false);
    expect(isMachineSource('banana')).toBe(false);
    for (const s of ['fused', 'interp', 'interpolated', 'propagated', 'relabel', 'recall', 'auto_accept'])
      expect(isMachineSource(s)).toBe(true);
    expect([...MACHINE_SOURCE_SPELLINGS].sort()).toEqual([
      'auto_accept',
      'fused',
      'interp',
      'interpolated',
      'propagated',
      'recall',
      'relabel',
    ]);
  });
});

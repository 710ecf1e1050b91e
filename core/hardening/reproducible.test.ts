import { jsonDifferences } from './reproducible';

describe('jsonDifferences', () => {
  it('names each path that differs, counting floating-point noise as equal', () => {
    const stored = {
      map: 0.5,
      classes: [
        { id: 1, ap: 0.25 },
        { id: 2, ap: 1 },
      ],
      parity: { ok: true },
    };
    expect(jsonDifferences(stored, structuredClone(stored))).toEqual([]);
    expect(jsonDifferences(stored, { ...stored, map: 0.5 + 1e-15 })).toEqual([]);
    expect(
      jsonDifferences(stored, {
        map: 0.6,
        classes: [
          { id: 1, ap: 0.25 },
          { id: 2, ap: 0.9 },
        ],
        parity: { ok: false },
      }),
    ).toEqual([
      { path: 'classes[1].ap', original: 1, now: 0.9 },
      { path: 'map', original: 0.5, now: 0.6 },
      { path: 'parity.ok', original: true, now: false },
    ]);
  });

  it('reports a list that changed length, and a field on one side only', () => {
    expect(jsonDifferences({ a: [1, 2] }, { a: [1] })).toEqual([{ path: 'a.length', original: 2, now: 1 }]);
    expect(jsonDifferences({ a: 1 }, { a: 1, b: 'x' })).toEqual([{ path: 'b', original: null, now: 'x' }]);
  });
});

import { jsonDifferences, manifestDifferences } from './reproducible';

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

describe('manifestDifferences', () => {
  const file = (path: string, sha256: string, size = 10) => ({ path, sha256, size });

  it('finds nothing between a manifest and the same files in another order', () => {
    const files = [file('a.json', 'aa'), file('b/c.txt', 'bb')];
    expect(manifestDifferences(files, [...files].reverse())).toEqual([]);
  });

  it('names a changed hash and size, a file the rebuild lacks and one it added, by path', () => {
    const original = [
      file('annotations/train.json', 'aa', 10),
      file('labels/f1.txt', 'bb'),
      file('x.md', 'cc'),
    ];
    const rebuilt = [
      file('annotations/train.json', 'ab', 12),
      file('x.md', 'cc'),
      file('labels/f2.txt', 'dd'),
    ];
    expect(manifestDifferences(original, rebuilt)).toEqual([
      { path: 'annotations/train.json.sha256', original: 'aa', now: 'ab' },
      { path: 'annotations/train.json.size', original: 10, now: 12 },
      { path: 'labels/f1.txt', original: 'bb', now: null },
      { path: 'labels/f2.txt', original: null, now: 'dd' },
    ]);
  });
});

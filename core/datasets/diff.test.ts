import { diffObjects, type DiffRow } from './diff';

const row = (id: string, over: Partial<DiffRow> = {}): DiffRow => ({
  object_id: id,
  class_name: 'car',
  version: 1,
  state: 'accepted',
  x1: 10,
  y1: 20,
  x2: 110,
  y2: 80,
  ...over,
});

/** Both ways of holding a side must give the same diff. */
async function bothWays(a: DiffRow[][], b: DiffRow[][], sampleLimit?: number) {
  const heldA = await diffObjects(a, b, 'a', sampleLimit);
  const heldB = await diffObjects(b, a, 'b', sampleLimit);
  expect(heldB.totals).toEqual(heldA.totals);
  expect(heldB.by_class).toEqual(heldA.by_class);
  expect(new Set(heldB.samples.changed)).toEqual(new Set(heldA.samples.changed));
  return heldA;
}

describe('diffObjects', () => {
  it('finds added, removed, changed and unchanged objects by class', async () => {
    const a = [
      [row('keep'), row('gone', { class_name: 'person' }), row('moved')],
      [row('relabelled'), row('reviewed'), row('bumped')],
    ];
    const b = [
      [row('keep'), row('moved', { x2: 111 }), row('relabelled', { class_name: 'truck' })],
      [
        row('reviewed', { state: 'rejected' }),
        row('bumped', { version: 2 }),
        row('new', { class_name: 'bus' }),
      ],
    ];
    const diff = await bothWays(a, b);
    expect(diff.totals).toEqual({ added: 1, removed: 1, changed: 4, unchanged: 1 });
    expect(diff.by_class).toEqual({
      bus: { added: 1, removed: 0, changed: 0 },
      car: { added: 0, removed: 0, changed: 3 },
      person: { added: 0, removed: 1, changed: 0 },
      // A changed class counts under the class the object has in b.
      truck: { added: 0, removed: 0, changed: 1 },
    });
    expect(diff.samples).toEqual({
      added: ['new'],
      removed: ['gone'],
      changed: ['moved', 'relabelled', 'reviewed', 'bumped'],
    });
    expect(Object.keys(diff.by_class)).toEqual(['bus', 'car', 'person', 'truck']);
  });

  it('compares boxes at 0.01 px', async () => {
    const a = [[row('noise', { x1: 10.001 }), row('moved', { y2: 80 })]];
    const b = [[row('noise', { x1: 10.004 }), row('moved', { y2: 80.01 })]];
    const diff = await bothWays(a, b);
    expect(diff.totals).toEqual({ added: 0, removed: 0, changed: 1, unchanged: 1 });
    expect(diff.samples.changed).toEqual(['moved']);
  });

  it('keeps at most the sample limit of ids per kind, counting all of them', async () => {
    const a = [Array.from({ length: 30 }, (_, i) => row(`a${i}`))];
    const b = [Array.from({ length: 40 }, (_, i) => row(`b${i}`))];
    const diff = await bothWays(a, b, 5);
    expect(diff.totals).toEqual({ added: 40, removed: 30, changed: 0, unchanged: 0 });
    expect(diff.samples.added).toEqual(['b0', 'b1', 'b2', 'b3', 'b4']);
    expect(diff.samples.removed).toEqual(['a0', 'a1', 'a2', 'a3', 'a4']);
  });

  it('grows past its initial capacity and diffs a commit with itself as unchanged', async () => {
    const rows = Array.from({ length: 5000 }, (_, i) => row(`o${i}`, { x1: i / 3, class_name: `c${i % 7}` }));
    const same = await diffObjects([rows.slice(0, 2500), rows.slice(2500)], [rows], 'a');
    expect(same.totals).toEqual({ added: 0, removed: 0, changed: 0, unchanged: 5000 });
    expect(same.by_class).toEqual({});
    const lastChanged = rows.map((r, i) => (i === 4999 ? { ...r, state: 'rejected' } : r));
    const diff = await diffObjects([rows], [lastChanged], 'a');
    expect(diff.totals.changed).toBe(1);
    expect(diff.samples.changed).toEqual(['o4999']);
    expect(diff.by_class).toEqual({ c1: { added: 0, removed: 0, changed: 1 } });
  });

  it('diffs empty commits', async () => {
    expect(await diffObjects([], [[row('x')]], 'a')).toMatchObject({
      totals: { added: 1, removed: 0, changed: 0, unchanged: 0 },
    });
    expect((await diffObjects([], [], 'b')).totals).toEqual({
      added: 0,
      removed: 0,
      changed: 0,
      unchanged: 0,
    });
  });
});

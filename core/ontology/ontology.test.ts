import { L1_BY_L0, ONTOLOGY_SEED } from './classes';
import { checkNewClass, isSafetyL1, ontologyViolations, SAFETY_L1, type OntologyEntry } from './rules';
import { ConflictError, InputError } from '../errors';

const entries: OntologyEntry[] = ONTOLOGY_SEED.map((c) => ({
  id: c.id,
  name: c.name,
  l0: c.l0,
  l1: c.l1,
  parentId: c.parent === null ? null : ONTOLOGY_SEED.find((p) => p.name === c.parent)!.id,
}));

describe('seed ontology', () => {
  it('has the spec counts: 166 classes, l0 83/58/22/3, 83 india', () => {
    expect(ONTOLOGY_SEED).toHaveLength(166);
    const byL0 = Object.fromEntries(
      Object.keys(L1_BY_L0).map((l0) => [l0, ONTOLOGY_SEED.filter((c) => c.l0 === l0).length]),
    );
    expect(byL0).toEqual({ object: 83, infra: 58, surface: 22, ignore: 3 });
    expect(ONTOLOGY_SEED.filter((c) => c.india)).toHaveLength(83);
  });

  it('has 13 l1 values, each under exactly one l0, all of them used', () => {
    const l1s = new Set(ONTOLOGY_SEED.map((c) => c.l1));
    expect(l1s.size).toBe(13);
    for (const l1 of l1s)
      expect(new Set(ONTOLOGY_SEED.filter((c) => c.l1 === l1).map((c) => c.l0)).size).toBe(1);
    expect(Object.values(L1_BY_L0).flat().sort()).toEqual([...l1s].sort());
  });

  it('has 1-based consecutive ids, unique snake_case names and a sound parent relation', () => {
    expect(ONTOLOGY_SEED.map((c) => c.id)).toEqual(ONTOLOGY_SEED.map((_, i) => i + 1));
    expect(ontologyViolations(entries)).toEqual([]);
    for (const c of ONTOLOGY_SEED) {
      expect(c.name).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(c.sources.length).toBeGreaterThan(0);
      if (c.parent) expect(ONTOLOGY_SEED.find((p) => p.name === c.parent)!.l0).toBe(c.l0);
    }
    // The taxonomies' own parents are kept: IDD's vehicle fallback gathers caravan, trailer, train.
    const parentOf = (n: string) => ONTOLOGY_SEED.find((c) => c.name === n)!.parent;
    expect(['caravan', 'trailer', 'train'].map(parentOf)).toEqual([
      'vehicle_fallback',
      'vehicle_fallback',
      'vehicle_fallback',
    ]);
    expect(parentOf('traffic_light_pedestrian')).toBe('traffic_light');
    expect(parentOf('parking')).toBe('drivable_fallback');
  });

  it('carries every IDD level-4 label', () => {
    const idd = ONTOLOGY_SEED.flatMap((c) => c.sources.filter((s) => s.startsWith('idd:l4:')));
    expect(idd).toEqual(
      expect.arrayContaining([
        'idd:l4:autorickshaw',
        'idd:l4:rider',
        'idd:l4:obs-str-bar-fallback',
        'idd:l4:vehicle fallback',
      ]),
    );
    for (const c of ONTOLOGY_SEED.filter((x) => x.sources.some((s) => s.startsWith('idd:'))))
      expect(c.india).toBe(true);
  });
});

describe('safety classes', () => {
  it('are vru, animal and two_wheeler, all object classes', () => {
    expect([...SAFETY_L1]).toEqual(['vru', 'animal', 'two_wheeler']);
    expect(isSafetyL1('two_wheeler')).toBe(true);
    expect(isSafetyL1('vehicle')).toBe(false);
    for (const l1 of SAFETY_L1) expect(L1_BY_L0.object).toContain(l1);
  });
});

describe('ontology invariants', () => {
  it('detects an l1 under two l0 values, a dangling parent and a cycle', () => {
    const bad: OntologyEntry[] = [
      { id: 1, name: 'a', l0: 'object', l1: 'x', parentId: 2 },
      { id: 2, name: 'b', l0: 'infra', l1: 'x', parentId: 1 },
      { id: 3, name: 'a', l0: 'nope', l1: 'y', parentId: 9 },
    ];
    const v = ontologyViolations(bad).join('\n');
    expect(v).toMatch(/l1 x sits under both object and infra/);
    expect(v).toMatch(/parent 9 does not exist/);
    expect(v).toMatch(/loops/);
    expect(v).toMatch(/duplicate class name a/);
    expect(v).toMatch(/unknown l0 nope/);
  });

  it('refuses new classes that break them', () => {
    const taken = new Set(['old_name']);
    expect(() =>
      checkNewClass(entries, { name: 'car', l0: 'object', l1: 'vehicle', parentId: null }, taken),
    ).toThrow(ConflictError);
    expect(() =>
      checkNewClass(entries, { name: 'old_name', l0: 'object', l1: 'vehicle', parentId: null }, taken),
    ).toThrow(ConflictError);
    expect(() =>
      checkNewClass(entries, { name: 'hovercraft', l0: 'infra', l1: 'vehicle', parentId: null }, taken),
    ).toThrow(InputError);
    expect(() =>
      checkNewClass(entries, { name: 'hovercraft', l0: 'object', l1: 'vehicle', parentId: 9999 }, taken),
    ).toThrow(/parent/);
    const road = entries.find((c) => c.name === 'road')!.id;
    expect(() =>
      checkNewClass(entries, { name: 'hovercraft', l0: 'object', l1: 'vehicle', parentId: road }, taken),
    ).toThrow(/parent must share|is surface/);
    expect(() =>
      checkNewClass(entries, { name: 'hovercraft', l0: 'object', l1: 'vehicle', parentId: 1 }, taken),
    ).not.toThrow();
    expect(() =>
      checkNewClass(entries, { name: 'drone', l0: 'object', l1: 'aerial', parentId: null }, taken),
    ).not.toThrow();
  });
});

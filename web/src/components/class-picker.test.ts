import { describe, expect, it } from '@jest/globals';
import { searchClasses, type OntologyClass } from './class-picker';

const c = (id: number, name: string, l1: string, retired = false): OntologyClass => ({
  id,
  name,
  l0: 'object',
  l1,
  retired,
});
const classes = [
  c(1, 'car', 'vehicle'),
  c(2, 'cargo_truck', 'vehicle'),
  c(3, 'scooter', 'two_wheeler'),
  c(4, 'motorcycle', 'two_wheeler'),
  c(5, 'old_car', 'vehicle', true),
  c(6, 'sidecar', 'two_wheeler'),
];

describe('class search', () => {
  it('puts the exact name first, then names that start with the query, and leaves retired classes out', () => {
    expect(searchClasses(classes, 'car').map((x) => x.name)).toEqual(['car', 'cargo_truck', 'sidecar']);
  });

  it('matches every typed word against name, l1 and l0', () => {
    expect(searchClasses(classes, 'two mot').map((x) => x.name)).toEqual(['motorcycle']);
    expect(searchClasses(classes, 'wheeler').map((x) => x.name)).toEqual([
      'motorcycle',
      'scooter',
      'sidecar',
    ]);
  });

  it('finds nothing for an unknown word, and caps the list', () => {
    expect(searchClasses(classes, 'unicorn')).toEqual([]);
    expect(searchClasses(classes, '', 2)).toHaveLength(2);
  });
});

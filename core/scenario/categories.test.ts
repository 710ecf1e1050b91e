import { OPENSCENARIO_1_2_ENUMS } from '../../testkit/openscenario';
import { ONTOLOGY_SEED } from '../ontology/classes';
import { entityCategory } from './categories';

/** Ancestors of a seed class, nearest first. */
function ancestors(name: string): string[] {
  const byName = new Map(ONTOLOGY_SEED.map((c) => [c.name, c]));
  const out: string[] = [];
  for (let p = byName.get(name)!.parent; p; p = byName.get(p)!.parent) out.push(p);
  return out;
}
const categoryOf = (name: string) => {
  const cls = ONTOLOGY_SEED.find((c) => c.name === name)!;
  return entityCategory(cls.name, cls.l1, ancestors(name));
};

describe('entity categories', () => {
  it('maps vehicles by the nearest named class of their chain', () => {
    expect(categoryOf('car')).toEqual({ kind: 'vehicle', category: 'car' });
    expect(categoryOf('taxi')).toEqual({ kind: 'vehicle', category: 'car' });
    expect(categoryOf('ambulance')).toEqual({ kind: 'vehicle', category: 'van' });
    expect(categoryOf('tanker')).toEqual({ kind: 'vehicle', category: 'truck' });
    expect(categoryOf('school_bus')).toEqual({ kind: 'vehicle', category: 'bus' });
    expect(categoryOf('tram')).toEqual({ kind: 'vehicle', category: 'tram' });
    expect(categoryOf('tractor_trailer')).toEqual({ kind: 'vehicle', category: 'semitrailer' });
    expect(categoryOf('autorickshaw')).toEqual({ kind: 'vehicle', category: 'car' });
    expect(categoryOf('scooter')).toEqual({ kind: 'vehicle', category: 'motorbike' });
    expect(categoryOf('e_bike')).toEqual({ kind: 'vehicle', category: 'bicycle' });
  });

  it('maps people and animals to pedestrians', () => {
    expect(categoryOf('person')).toEqual({ kind: 'pedestrian', category: 'pedestrian' });
    expect(categoryOf('motorcyclist')).toEqual({ kind: 'pedestrian', category: 'pedestrian' });
    expect(categoryOf('wheelchair_user')).toEqual({ kind: 'pedestrian', category: 'wheelchair' });
    expect(categoryOf('cow')).toEqual({ kind: 'pedestrian', category: 'animal' });
  });

  it('maps everything else to misc objects, `none` where OpenSCENARIO has no category', () => {
    expect(categoryOf('traffic_cone')).toEqual({ kind: 'misc_object', category: 'obstacle' });
    expect(categoryOf('guard_rail')).toEqual({ kind: 'misc_object', category: 'railing' });
    expect(categoryOf('street_light')).toEqual({ kind: 'misc_object', category: 'streetLamp' });
    expect(categoryOf('crosswalk_zebra')).toEqual({ kind: 'misc_object', category: 'crosswalk' });
    expect(categoryOf('bus_shelter')).toEqual({ kind: 'misc_object', category: 'building' });
    expect(categoryOf('traffic_sign')).toEqual({ kind: 'misc_object', category: 'none' });
    expect(categoryOf('unlabeled')).toEqual({ kind: 'misc_object', category: 'none' });
  });

  it('gives every seed class a category from the OpenSCENARIO 1.2 lists', () => {
    const allowed: Record<string, string[]> = {
      vehicle: OPENSCENARIO_1_2_ENUMS.vehicleCategory!,
      pedestrian: OPENSCENARIO_1_2_ENUMS.pedestrianCategory!,
      misc_object: OPENSCENARIO_1_2_ENUMS.miscObjectCategory!,
    };

    for (const cls of ONTOLOGY_SEED) {
      const { kind, category } = categoryOf(cls.name);
      expect({ name: cls.name, ok: allowed[kind]!.includes(category) }).toEqual({ name: cls.name, ok: true });
    }
  });
});

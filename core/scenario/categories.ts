/**
 * Which OpenSCENARIO entity an ontology class becomes (docs/scenario.md, Entities). OpenSCENARIO
 * knows three kinds of scenario object with fixed category lists; the ontology's l1 picks the kind
 * and the class or its nearest ancestor named below picks the category, so a new subclass (say a
 * `mini_bus` under `bus`) lands right without touching this table.
 */

export type EntityKind = 'vehicle' | 'pedestrian' | 'misc_object';

export interface EntityCategory {
  kind: EntityKind;
  /** The category attribute's value: vehicleCategory, pedestrianCategory or miscObjectCategory. */
  category: string;
}

/** OpenSCENARIO 1.2 VehicleCategory values, by class name. */
const VEHICLE_BY_CLASS: Record<string, string> = {
  car: 'car',
  van: 'van',
  truck: 'truck',
  tractor_trailer: 'semitrailer',
  bus: 'bus',
  trailer: 'trailer',
  caravan: 'trailer',
  tram: 'tram',
  train: 'train',
  bicycle: 'bicycle',
  kick_scooter: 'bicycle',
  cycle_rickshaw: 'bicycle',
  motorcycle: 'motorbike',
};

/** OpenSCENARIO 1.2 MiscObjectCategory values, by class name. */
const MISC_BY_CLASS: Record<string, string> = {
  guard_rail: 'railing',
  traffic_cone: 'obstacle',
  concrete_block: 'obstacle',
  pole: 'pole',
  utility_pole: 'pole',
  street_light: 'streetLamp',
  tree: 'tree',
  vegetation: 'vegetation',
  crosswalk_plain: 'crosswalk',
  crosswalk_zebra: 'crosswalk',
  parking: 'parkingSpace',
  building: 'building',
};

/** Categories by l1 where no class of the chain is named above. */
const BY_L1: Record<string, EntityCategory> = {
  vehicle: { kind: 'vehicle', category: 'car' },
  two_wheeler: { kind: 'vehicle', category: 'motorbike' },
  vru: { kind: 'pedestrian', category: 'pedestrian' },
  animal: { kind: 'pedestrian', category: 'animal' },
  barrier: { kind: 'misc_object', category: 'barrier' },
  structure: { kind: 'misc_object', category: 'building' },
  nature: { kind: 'misc_object', category: 'vegetation' },
  marking: { kind: 'misc_object', category: 'roadMark' },
};

const MISC_NONE: EntityCategory = { kind: 'misc_object', category: 'none' };

/**
 * The entity category of a class, given its name and l1 and its ancestors' names nearest first
 * (`scooter` → [`motorcycle`, `two_wheeler`]).
 */
export function entityCategory(name: string, l1: string, ancestors: readonly string[]): EntityCategory {
  const fallback = BY_L1[l1] ?? MISC_NONE;
  const chain = [name, ...ancestors];
  if (fallback.kind === 'vehicle') {
    const hit = chain.find((n) => VEHICLE_BY_CLASS[n]);
    return hit ? { kind: 'vehicle', category: VEHICLE_BY_CLASS[hit]! } : fallback;
  }
  if (fallback.kind === 'pedestrian') {
    return chain.includes('wheelchair_user') ? { kind: 'pedestrian', category: 'wheelchair' } : fallback;
  }
  const hit = chain.find((n) => MISC_BY_CLASS[n]);
  return hit ? { kind: 'misc_object', category: MISC_BY_CLASS[hit]! } : fallback;
}

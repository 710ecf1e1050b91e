/**
 * The seed ontology: 166 classes built from public driving taxonomies, keeping their parent
 * relation (which the legacy two-level encoding lacked).
 *
 * - The India Driving Dataset (IDD) four-level hierarchy supplies the backbone: its level-4 labels
 *   are classes (`idd:l4:<name>`), its level-2 groups shaped the l1 values (its `two-wheeler` group
 *   is our `two_wheeler`), and its level-3 fallbacks are the parents of what they gather
 *   (`vehicle fallback` ← caravan, trailer, train; `drivable fallback` ← parking).
 * - Mapillary Vistas (v1.2 names, and v2.0 names where v1.2 has none) adds the finer street
 *   furniture, barrier, marking and traffic-control classes, each under the IDD/Cityscapes class it
 *   refines (`object--traffic-light--pedestrians` → traffic_light).
 * - Cityscapes names are recorded wherever a class matches one of its 30 labels.
 * - `platform` marks classes the platform adds for Indian and general roads (autorickshaw kin,
 *   livestock, vehicle subtypes) that none of the three has; each sits under its taxonomy parent.
 *
 * `india` is true for every IDD label and for classes characteristic of Indian roads.
 * Ids are 1-based and stable: the migration 0002_annotation_store inserts exactly this list.
 */

export const L0_VALUES = ['object', 'infra', 'surface', 'ignore'] as const;
export type L0 = (typeof L0_VALUES)[number];

/** The 13 l1 values, each under exactly one l0. */
export const L1_BY_L0 = {
  object: ['vru', 'animal', 'two_wheeler', 'vehicle'],
  infra: ['barrier', 'traffic_control', 'street_furniture', 'structure', 'nature'],
  surface: ['drivable', 'non_drivable', 'marking'],
  ignore: ['void'],
} as const satisfies Record<L0, readonly string[]>;

export interface SeedClass {
  id: number;
  name: string;
  l0: L0;
  l1: string;
  india: boolean;
  parent: string | null;
  sources: string[];
}

type Row = [name: string, l1: string, india: boolean, parent: string | null, sources: string[]];

const idd = (l: 3 | 4, name: string) => `idd:l${l}:${name}`;
const cs = (name: string) => `cityscapes:${name}`;
const mv = (name: string) => `vistas:${name}`;
const P = 'platform';

const OBJECT: Row[] = [
  // vru
  ['person', 'vru', true, null, [idd(4, 'person'), cs('person'), mv('human--person')]],
  ['pedestrian', 'vru', true, 'person', [mv('human--person--individual')]],
  ['person_group', 'vru', true, 'person', [mv('human--person--person-group')]],
  ['child', 'vru', false, 'person', [P]],
  ['person_sitting', 'vru', false, 'person', [P]],
  ['construction_worker', 'vru', false, 'person', [P]],
  ['police_officer', 'vru', false, 'person', [P]],
  ['traffic_police', 'vru', true, 'police_officer', [P]],
  ['wheelchair_user', 'vru', false, 'person', [P]],
  ['street_vendor', 'vru', true, 'person', [P]],
  ['rider', 'vru', true, null, [idd(4, 'rider'), cs('rider')]],
  ['bicyclist', 'vru', false, 'rider', [mv('human--rider--bicyclist')]],
  ['motorcyclist', 'vru', true, 'rider', [mv('human--rider--motorcyclist')]],
  ['other_rider', 'vru', false, 'rider', [mv('human--rider--other-rider')]],
  ['pillion_rider', 'vru', true, 'rider', [P]],
  ['rickshaw_puller', 'vru', true, 'rider', [P]],
  // animal
  ['animal', 'animal', true, null, [idd(4, 'animal')]],
  ['ground_animal', 'animal', false, 'animal', [mv('animal--ground-animal')]],
  ['bird', 'animal', false, 'animal', [mv('animal--bird')]],
  ['dog', 'animal', true, 'ground_animal', [P]],
  ['cat', 'animal', false, 'ground_animal', [P]],
  ['cow', 'animal', true, 'ground_animal', [P]],
  ['buffalo', 'animal', true, 'ground_animal', [P]],
  ['goat', 'animal', true, 'ground_animal', [P]],
  ['sheep', 'animal', false, 'ground_animal', [P]],
  ['horse', 'animal', false, 'ground_animal', [P]],
  ['donkey', 'animal', true, 'ground_animal', [P]],
  ['camel', 'animal', true, 'ground_animal', [P]],
  ['elephant', 'animal', true, 'ground_animal', [P]],
  ['pig', 'animal', true, 'ground_animal', [P]],
  ['monkey', 'animal', true, 'ground_animal', [P]],
  // two_wheeler
  ['two_wheeler', 'two_wheeler', true, null, ['idd:l2:2-wheeler']],
  [
    'motorcycle',
    'two_wheeler',
    true,
    'two_wheeler',
    [idd(4, 'motorcycle'), cs('motorcycle'), mv('object--vehicle--motorcycle')],
  ],
  ['scooter', 'two_wheeler', true, 'motorcycle', [P]],
  ['moped', 'two_wheeler', true, 'motorcycle', [P]],
  [
    'bicycle',
    'two_wheeler',
    true,
    'two_wheeler',
    [idd(4, 'bicycle'), cs('bicycle'), mv('object--vehicle--bicycle')],
  ],
  ['e_bike', 'two_wheeler', false, 'bicycle', [P]],
  ['cargo_bicycle', 'two_wheeler', false, 'bicycle', [P]],
  ['kick_scooter', 'two_wheeler', false, 'two_wheeler', [P]],
  // vehicle
  ['car', 'vehicle', true, null, [idd(4, 'car'), cs('car'), mv('object--vehicle--car')]],
  ['sedan', 'vehicle', false, 'car', [P]],
  ['hatchback', 'vehicle', true, 'car', [P]],
  ['suv', 'vehicle', false, 'car', [P]],
  ['jeep', 'vehicle', true, 'car', [P]],
  ['taxi', 'vehicle', false, 'car', [P]],
  ['police_car', 'vehicle', false, 'car', [P]],
  ['van', 'vehicle', false, null, [P]],
  ['delivery_van', 'vehicle', false, 'van', [P]],
  ['ambulance', 'vehicle', false, 'van', [P]],
  ['truck', 'vehicle', true, null, [idd(4, 'truck'), cs('truck'), mv('object--vehicle--truck')]],
  ['pickup_truck', 'vehicle', false, 'truck', [P]],
  ['mini_truck', 'vehicle', true, 'truck', [P]],
  ['tanker', 'vehicle', true, 'truck', [P]],
  ['garbage_truck', 'vehicle', false, 'truck', [P]],
  ['fire_truck', 'vehicle', false, 'truck', [P]],
  ['crane_truck', 'vehicle', false, 'truck', [P]],
  ['container_truck', 'vehicle', false, 'truck', [P]],
  ['car_carrier', 'vehicle', false, 'truck', [P]],
  ['cement_mixer', 'vehicle', false, 'truck', [P]],
  ['bus', 'vehicle', true, null, [idd(4, 'bus'), cs('bus'), mv('object--vehicle--bus')]],
  ['minibus', 'vehicle', true, 'bus', [P]],
  ['school_bus', 'vehicle', false, 'bus', [P]],
  ['double_decker_bus', 'vehicle', false, 'bus', [P]],
  ['autorickshaw', 'vehicle', true, null, [idd(4, 'autorickshaw')]],
  ['e_rickshaw', 'vehicle', true, 'autorickshaw', [P]],
  ['tempo', 'vehicle', true, 'autorickshaw', [P]],
  ['vehicle_fallback', 'vehicle', true, null, [idd(4, 'vehicle fallback')]],
  [
    'caravan',
    'vehicle',
    true,
    'vehicle_fallback',
    [idd(4, 'caravan'), cs('caravan'), mv('object--vehicle--caravan')],
  ],
  [
    'trailer',
    'vehicle',
    true,
    'vehicle_fallback',
    [idd(4, 'trailer'), cs('trailer'), mv('object--vehicle--trailer')],
  ],
  [
    'train',
    'vehicle',
    true,
    'vehicle_fallback',
    [idd(4, 'train'), cs('train'), mv('object--vehicle--on-rails')],
  ],
  ['tram', 'vehicle', false, 'train', [P]],
  ['tractor', 'vehicle', true, 'vehicle_fallback', [P]],
  ['tractor_trailer', 'vehicle', true, 'tractor', [P]],
  ['wheeled_slow', 'vehicle', false, 'vehicle_fallback', [mv('object--vehicle--wheeled-slow')]],
  ['cycle_rickshaw', 'vehicle', true, 'wheeled_slow', [P]],
  ['hand_cart', 'vehicle', true, 'wheeled_slow', [P]],
  ['animal_cart', 'vehicle', true, 'wheeled_slow', [P]],
  ['other_vehicle', 'vehicle', false, 'vehicle_fallback', [mv('object--vehicle--other-vehicle')]],
  ['boat', 'vehicle', false, 'other_vehicle', [mv('object--vehicle--boat')]],
  ['construction_vehicle', 'vehicle', false, 'vehicle_fallback', [P]],
  ['excavator', 'vehicle', false, 'construction_vehicle', [P]],
  ['backhoe_loader', 'vehicle', true, 'construction_vehicle', [P]],
  ['road_roller', 'vehicle', false, 'construction_vehicle', [P]],
];

const INFRA: Row[] = [
  // barrier
  ['curb', 'barrier', true, null, [idd(4, 'curb'), mv('construction--barrier--curb')]],
  ['wall', 'barrier', true, null, [idd(4, 'wall'), cs('wall'), mv('construction--barrier--wall')]],
  ['fence', 'barrier', true, null, [idd(4, 'fence'), cs('fence'), mv('construction--barrier--fence')]],
  [
    'guard_rail',
    'barrier',
    true,
    null,
    [idd(4, 'guard rail'), cs('guard rail'), mv('construction--barrier--guard-rail')],
  ],
  ['barrier_fallback', 'barrier', true, null, [idd(4, 'obs-str-bar-fallback')]],
  ['other_barrier', 'barrier', false, 'barrier_fallback', [mv('construction--barrier--other-barrier')]],
  ['temporary_barrier', 'barrier', false, 'barrier_fallback', [mv('construction--barrier--temporary')]],
  ['road_median', 'barrier', true, 'barrier_fallback', [mv('construction--barrier--road-median')]],
  ['road_side_barrier', 'barrier', false, 'barrier_fallback', [mv('construction--barrier--road-side')]],
  ['separator', 'barrier', false, 'barrier_fallback', [mv('construction--barrier--separator')]],
  ['concrete_block', 'barrier', false, 'barrier_fallback', [mv('construction--barrier--concrete-block')]],
  ['traffic_cone', 'barrier', false, 'temporary_barrier', [mv('object--traffic-cone')]],
  // traffic_control
  [
    'traffic_light',
    'traffic_control',
    true,
    null,
    [idd(4, 'traffic light'), cs('traffic light'), mv('object--traffic-light')],
  ],
  [
    'traffic_light_general',
    'traffic_control',
    false,
    'traffic_light',
    [mv('object--traffic-light--general-upright')],
  ],
  [
    'traffic_light_horizontal',
    'traffic_control',
    false,
    'traffic_light',
    [mv('object--traffic-light--general-horizontal')],
  ],
  [
    'traffic_light_single',
    'traffic_control',
    false,
    'traffic_light',
    [mv('object--traffic-light--general-single')],
  ],
  [
    'traffic_light_pedestrian',
    'traffic_control',
    false,
    'traffic_light',
    [mv('object--traffic-light--pedestrians')],
  ],
  [
    'traffic_light_cyclist',
    'traffic_control',
    false,
    'traffic_light',
    [mv('object--traffic-light--cyclists')],
  ],
  [
    'traffic_sign',
    'traffic_control',
    true,
    null,
    [idd(4, 'traffic sign'), cs('traffic sign'), mv('object--traffic-sign--front')],
  ],
  ['traffic_sign_back', 'traffic_control', false, 'traffic_sign', [mv('object--traffic-sign--back')]],
  ['direction_sign', 'traffic_control', false, 'traffic_sign', [mv('object--traffic-sign--direction-front')]],
  ['temporary_sign', 'traffic_control', false, 'traffic_sign', [mv('object--traffic-sign--temporary-front')]],
  ['ambiguous_sign', 'traffic_control', false, 'traffic_sign', [mv('object--traffic-sign--ambiguous')]],
  ['traffic_sign_frame', 'traffic_control', false, null, [mv('object--support--traffic-sign-frame')]],
  // street_furniture
  ['pole', 'street_furniture', true, null, [idd(4, 'pole'), cs('pole'), mv('object--support--pole')]],
  [
    'polegroup',
    'street_furniture',
    true,
    'pole',
    [idd(4, 'polegroup'), cs('polegroup'), mv('object--support--pole-group')],
  ],
  ['utility_pole', 'street_furniture', true, 'pole', [mv('object--support--utility-pole')]],
  ['street_light', 'street_furniture', false, 'pole', [mv('object--street-light')]],
  ['billboard', 'street_furniture', true, null, [idd(4, 'billboard'), mv('object--billboard')]],
  ['banner', 'street_furniture', true, 'billboard', [mv('object--banner')]],
  ['advertisement_sign', 'street_furniture', false, 'billboard', [mv('object--sign--advertisement')]],
  ['store_sign', 'street_furniture', true, 'billboard', [mv('object--sign--store')]],
  ['information_sign', 'street_furniture', false, null, [mv('object--sign--information')]],
  ['bench', 'street_furniture', false, null, [mv('object--bench')]],
  ['bike_rack', 'street_furniture', false, null, [mv('object--bike-rack')]],
  ['cctv_camera', 'street_furniture', false, null, [mv('object--cctv-camera')]],
  ['fire_hydrant', 'street_furniture', false, null, [mv('object--fire-hydrant')]],
  ['junction_box', 'street_furniture', false, null, [mv('object--junction-box')]],
  ['mailbox', 'street_furniture', false, null, [mv('object--mailbox')]],
  ['phone_booth', 'street_furniture', false, null, [mv('object--phone-booth')]],
  ['trash_can', 'street_furniture', false, null, [mv('object--trash-can')]],
  ['catch_basin', 'street_furniture', false, null, [mv('object--catch-basin')]],
  ['parking_meter', 'street_furniture', false, null, [mv('object--parking-meter')]],
  ['water_valve', 'street_furniture', false, null, [mv('object--water-valve')]],
  ['wire_group', 'street_furniture', false, null, [mv('object--wire-group')]],
  // structure
  [
    'building',
    'structure',
    true,
    null,
    [idd(4, 'building'), cs('building'), mv('construction--structure--building')],
  ],
  [
    'bridge',
    'structure',
    true,
    null,
    [idd(4, 'bridge'), cs('bridge'), mv('construction--structure--bridge')],
  ],
  [
    'tunnel',
    'structure',
    true,
    null,
    [idd(4, 'tunnel'), cs('tunnel'), mv('construction--structure--tunnel')],
  ],
  ['flyover', 'structure', true, 'bridge', [P]],
  ['toll_booth', 'structure', true, 'building', [P]],
  ['bus_shelter', 'structure', false, 'building', [P]],
  ['roadside_stall', 'structure', true, 'building', [P]],
  ['construction_site', 'structure', true, null, [P]],
  // nature
  ['vegetation', 'nature', true, null, [idd(4, 'vegetation'), cs('vegetation'), mv('nature--vegetation')]],
  ['tree', 'nature', false, 'vegetation', [P]],
  ['sky', 'nature', true, null, [idd(4, 'sky'), cs('sky'), mv('nature--sky')]],
  ['mountain', 'nature', false, null, [mv('nature--mountain')]],
  ['fallback_background', 'nature', true, null, [idd(4, 'fallback background')]],
];

const SURFACE: Row[] = [
  // drivable
  ['road', 'drivable', true, null, [idd(4, 'road'), cs('road'), mv('construction--flat--road')]],
  ['drivable_fallback', 'drivable', true, null, [idd(4, 'drivable fallback')]],
  [
    'parking',
    'drivable',
    true,
    'drivable_fallback',
    [idd(4, 'parking'), cs('parking'), mv('construction--flat--parking')],
  ],
  ['unpaved_road', 'drivable', true, 'drivable_fallback', [P]],
  ['service_lane', 'drivable', true, 'road', [mv('construction--flat--service-lane')]],
  ['bike_lane', 'drivable', false, 'road', [mv('construction--flat--bike-lane')]],
  ['crosswalk_plain', 'drivable', false, 'road', [mv('construction--flat--crosswalk-plain')]],
  ['pothole', 'drivable', true, 'road', [mv('object--pothole')]],
  ['speed_breaker', 'drivable', true, 'road', [P]],
  ['manhole', 'drivable', true, 'road', [mv('object--manhole')]],
  // non_drivable
  [
    'sidewalk',
    'non_drivable',
    true,
    null,
    [idd(4, 'sidewalk'), cs('sidewalk'), mv('construction--flat--sidewalk')],
  ],
  ['non_drivable_fallback', 'non_drivable', true, null, [idd(4, 'non-drivable fallback')]],
  [
    'rail_track',
    'non_drivable',
    true,
    'non_drivable_fallback',
    [idd(4, 'rail track'), cs('rail track'), mv('construction--flat--rail-track')],
  ],
  ['terrain', 'non_drivable', false, 'non_drivable_fallback', [cs('terrain'), mv('nature--terrain')]],
  ['pedestrian_area', 'non_drivable', false, 'sidewalk', [mv('construction--flat--pedestrian-area')]],
  ['curb_cut', 'non_drivable', false, 'sidewalk', [mv('construction--flat--curb-cut')]],
  ['water', 'non_drivable', false, null, [mv('nature--water')]],
  // marking
  ['lane_marking', 'marking', false, null, [mv('marking--general')]],
  ['lane_marking_solid', 'marking', false, 'lane_marking', [mv('marking--continuous--solid')]],
  ['lane_marking_dashed', 'marking', false, 'lane_marking', [mv('marking--continuous--dashed')]],
  ['stop_line', 'marking', false, 'lane_marking', [mv('marking--discrete--stop-line')]],
  ['crosswalk_zebra', 'marking', false, null, [mv('marking--crosswalk-zebra')]],
];

const IGNORE: Row[] = [
  ['unlabeled', 'void', true, null, [idd(4, 'unlabeled'), cs('unlabeled'), mv('void--unlabeled')]],
  [
    'ego_vehicle',
    'void',
    true,
    null,
    [idd(4, 'ego vehicle'), cs('ego vehicle'), mv('void--ego-vehicle'), mv('void--car-mount')],
  ],
  [
    'out_of_roi',
    'void',
    true,
    null,
    [idd(4, 'out of roi'), idd(4, 'rectification border'), cs('out of roi'), cs('rectification border')],
  ],
];

const l0Of = (l1: string): L0 =>
  (Object.keys(L1_BY_L0) as L0[]).find((l0) => (L1_BY_L0[l0] as readonly string[]).includes(l1))!;

export const ONTOLOGY_SEED: readonly SeedClass[] = [...OBJECT, ...INFRA, ...SURFACE, ...IGNORE].map(
  ([name, l1, india, parent, sources], i) => ({
    id: i + 1,
    name,
    l0: l0Of(l1),
    l1,
    india,
    parent,
    sources,
  }),
);

import { LIGHTING_SQL, LIGHTING_VALUES } from '../curation/slice';

/**
 * Operational-design-domain attributes of a frame (docs/odd-coverage.md). Each comes from what the
 * data really carries, never from a guess:
 * - `lighting`: derived from ingest's exposure record exactly as slices derive it (LIGHTING_SQL);
 * - `weather`, `time_of_day`, `road_type`, `maneuver`: the frame's recorded `context` key of that
 *   name, as text; a frame without one reads `unknown`. No ego-motion (IMU/GNSS) is recorded, so
 *   `maneuver` is only what a reviewer tagged (POST /api/odd/maneuver);
 * - `scene_density`: banded from the frame's own objects (SCENE_DENSITY_BANDS).
 */

export const ODD_ATTRIBUTES = [
  'lighting',
  'weather',
  'time_of_day',
  'road_type',
  'maneuver',
  'scene_density',
] as const;
export type OddAttribute = (typeof ODD_ATTRIBUTES)[number];

/** Attributes read from the frame's recorded context under the key of the same name. */
export const RECORDED_ATTRIBUTES = ['weather', 'time_of_day', 'road_type', 'maneuver'] as const;

/** What a frame reads for an attribute it carries no value for. */
export const UNKNOWN = 'unknown';

/** Manoeuvres a reviewer may tag; nothing derives them from ego motion yet. */
export const MANEUVERS = [
  'straight',
  'left_turn',
  'right_turn',
  'lane_change_left',
  'lane_change_right',
  'u_turn',
  'stop',
  'start',
  'overtake',
  'merge',
  'reverse',
  'park',
] as const;
export type Maneuver = (typeof MANEUVERS)[number];

/**
 * Scene density from the frame's objects that are not rejected: VRUs are objects of l1 `vru`,
 * vehicles those of l1 `vehicle` or `two_wheeler`. A band is the first whose limits the frame
 * reaches, checked densest first: a crowd of pedestrians is dense however few vehicles there are.
 */
export const SCENE_DENSITY_BANDS = [
  { value: 'dense', minRoadUsers: 11, minVru: 6 },
  { value: 'moderate', minRoadUsers: 4, minVru: 3 },
  { value: 'sparse', minRoadUsers: 1, minVru: 1 },
  { value: 'empty', minRoadUsers: 0, minVru: 0 },
] as const;
export const VRU_L1 = ['vru'] as const;
export const VEHICLE_L1 = ['vehicle', 'two_wheeler'] as const;

/** The band of a frame with `vru` VRUs and `vehicles` vehicles (the SQL below says the same). */
export function sceneDensity(vru: number, vehicles: number): string {
  const roadUsers = vru + vehicles;
  const band = SCENE_DENSITY_BANDS.find((b) => roadUsers >= b.minRoadUsers || vru >= b.minVru);
  return band!.value;
}

/**
 * The values each attribute is expected to take: closed for what the platform derives or lets a
 * reviewer tag (a target naming anything else is a typo), the reference vocabulary for what other
 * sources record (data may carry other values; `discover` lists the vocabulary's unseen ones).
 */
export const ODD_VOCABULARY: Record<OddAttribute, readonly string[]> = {
  lighting: LIGHTING_VALUES.filter((v) => v !== UNKNOWN),
  weather: ['clear', 'cloudy', 'rain', 'snow', 'fog'],
  time_of_day: ['day', 'dawn_dusk', 'night'],
  road_type: ['highway', 'urban', 'rural', 'residential', 'parking'],
  maneuver: MANEUVERS,
  scene_density: SCENE_DENSITY_BANDS.map((b) => b.value),
};

/** Attributes whose values are only ever those of ODD_VOCABULARY (or `unknown`). */
export const CLOSED_ATTRIBUTES: ReadonlySet<OddAttribute> = new Set([
  'lighting',
  'maneuver',
  'scene_density',
]);

export const isKnownValue = (attribute: OddAttribute, value: string): boolean =>
  !CLOSED_ATTRIBUTES.has(attribute) || value === UNKNOWN || ODD_VOCABULARY[attribute].includes(value);

const densitySql = (): string =>
  `CASE ${SCENE_DENSITY_BANDS.map(
    (b) => `WHEN d.vru + d.vehicles >= ${b.minRoadUsers} OR d.vru >= ${b.minVru} THEN '${b.value}'`,
  ).join(' ')} END`;

const quoted = (values: readonly string[]) => values.map((v) => `'${v}'`).join(', ');

/** Per frame `f`: its VRUs and vehicles, joined as `d`. */
export const DENSITY_JOIN = `LEFT JOIN LATERAL (
  SELECT count(*) FILTER (WHERE c.l1 IN (${quoted(VRU_L1)}))::int AS vru,
         count(*) FILTER (WHERE c.l1 IN (${quoted(VEHICLE_L1)}))::int AS vehicles
    FROM objects o JOIN ontology_classes c ON c.id = o.class_id
   WHERE o.frame_id = f.id AND o.state <> 'rejected') d ON TRUE`;

/** The SQL value of an attribute over `frames f` with DENSITY_JOIN. */
export function attributeSql(attribute: OddAttribute): string {
  if (attribute === 'lighting') return `(${LIGHTING_SQL})`;
  if (attribute === 'scene_density') return `(${densitySql()})`;
  return `COALESCE(NULLIF(f.context->>'${attribute}', ''), '${UNKNOWN}')`;
}

/** Every attribute of every frame `f` as a column named after it. */
export const ATTRIBUTE_COLUMNS = ODD_ATTRIBUTES.map((a) => `${attributeSql(a)} AS ${a}`).join(',\n  ');

/** One row per attribute of each frame `fa` (the ATTRIBUTE_COLUMNS of a CTE), as `a(attribute, value)`. */
export const ATTRIBUTE_ROWS = `CROSS JOIN LATERAL (VALUES ${ODD_ATTRIBUTES.map((a) => `('${a}', fa.${a})`).join(', ')}) a(attribute, value)`;

/** Where each attribute's value comes from, as the composition answer says it. */
export const ATTRIBUTE_SOURCES: Record<OddAttribute, string> = {
  lighting:
    "derived from ingest's exposure record: mean luma < 60 dark, > 190 bright, else normal; unknown without one",
  weather: 'the frame’s recorded context.weather; unknown without one',
  time_of_day: 'the frame’s recorded context.time_of_day; unknown without one',
  road_type: 'the frame’s recorded context.road_type; unknown without one',
  maneuver:
    'the frame’s context.maneuver as a reviewer tagged it (POST /api/odd/maneuver); no ego motion is recorded to derive it; unknown untagged',
  scene_density: `banded from the frame's objects that are not rejected (VRU: l1 ${VRU_L1.join('/')}; vehicles: l1 ${VEHICLE_L1.join('/')}): ${SCENE_DENSITY_BANDS.map((b) => (b.minRoadUsers ? `${b.value} ≥ ${b.minRoadUsers} road users or ≥ ${b.minVru} VRUs` : `${b.value} without any`)).join('; ')}`,
};

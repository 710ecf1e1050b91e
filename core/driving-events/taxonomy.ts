/**
 * The driving-event taxonomy (docs/driving-events.md): each kind with its rule, who takes part and
 * the thresholds, as data, so `GET /api/events/taxonomy` answers exactly what the rules use.
 */

export const DRIVING_EVENT_KINDS = [
  'cut_in',
  'lead_vehicle_braking',
  'pedestrian_crossing',
  'close_pass',
  'hard_braking',
] as const;
export type DrivingEventKind = (typeof DRIVING_EVENT_KINDS)[number];

export const DRIVING_EVENT_STATES = ['proposed', 'confirmed', 'rejected'] as const;
export type DrivingEventState = (typeof DRIVING_EVENT_STATES)[number];
export const DRIVING_EVENT_SOURCES = ['derived', 'human'] as const;

/** Changes whenever a rule or threshold changes what is derived; stored with every derived event. */
export const DERIVER_VERSION = 'driving-rules-1';

/**
 * The ego corridor in frame fractions: the box's bottom centre within `half_width` of the image's
 * vertical centre line and its bottom edge at least `min_bottom` down the frame (the road just
 * ahead: with the default dashcam, `min_bottom` 0.55 is about 25 m).
 */
export const EGO_CORRIDOR = { half_width: 0.15, min_bottom: 0.55 } as const;

export const DRIVING_EVENT_THRESHOLDS = {
  cut_in: {
    /** Consecutive points laterally outside the corridor, on one side, just before it enters. */
    min_outside_points: 2,
    /** How long it must stay in the corridor from the point it entered, ms. */
    min_stay_ms: 1000,
    /** Sideways travel from the last outside point, frame widths. */
    min_lateral_travel: 0.08,
  },
  pedestrian_crossing: {
    min_outside_points: 1,
    min_inside_points: 1,
    min_lateral_travel: 0.08,
  },
  close_pass: {
    /** Nearest ground distance (box bottom centre, metres) while beside the corridor. */
    max_distance_m: 3,
  },
  lead_vehicle_braking: {
    /** The lead's ground deceleration (dynamics `accel_mps2`), m/s², on every point of the run. */
    min_lead_decel_mps2: 2,
    /** Its range must close over the run at least this fast, m/s. */
    min_closing_mps: 0.5,
    /** …while the ego speed changes by no more than this, m/s². */
    max_ego_accel_mps2: 1,
    min_duration_ms: 600,
  },
  hard_braking: {
    /** From ego speed: deceleration between consecutive frames, m/s² (0.3 g). */
    min_decel_mps2: 3,
    min_duration_ms: 300,
  },
} as const;

/** The ontology's l1 groups whose tracks each rule considers. */
export const DRIVING_EVENT_PARTICIPANTS: Record<DrivingEventKind, readonly string[]> = {
  cut_in: ['vehicle', 'two_wheeler'],
  lead_vehicle_braking: ['vehicle', 'two_wheeler'],
  pedestrian_crossing: ['vru'],
  close_pass: ['vehicle', 'two_wheeler', 'vru', 'animal'],
  hard_braking: [],
};

export const DRIVING_EVENT_INFO: Record<
  DrivingEventKind,
  { description: string; rule: string; needs: string }
> = {
  cut_in: {
    description: 'a vehicle moves into the ego corridor ahead from the side and stays',
    rule: 'a vehicle or two-wheeler track has at least min_outside_points consecutive points laterally outside the corridor on one side, then enters it, travels at least min_lateral_travel sideways and stays in it for at least min_stay_ms; spans the last outside point to the last point in the corridor',
    needs: 'tracks',
  },
  lead_vehicle_braking: {
    description: 'the vehicle ahead in the ego corridor brakes while the ego speed is steady',
    rule: 'on the nearest corridor vehicle of each frame, a run of consecutive points lasting min_duration_ms whose ground deceleration is at least min_lead_decel_mps2, whose range closes at min_closing_mps or faster, while the ego speed changes by at most max_ego_accel_mps2',
    needs: 'tracks, frames.context.ego_speed_mps (metric dynamics)',
  },
  pedestrian_crossing: {
    description: 'a vulnerable road user crosses into the ego corridor',
    rule: 'a vulnerable-road-user track has at least min_outside_points points laterally outside the corridor, then at least min_inside_points in it, travelling at least min_lateral_travel sideways; spans the last outside point to the point it leaves (or its last point in the corridor); evidence says whether it left on the other side',
    needs: 'tracks',
  },
  close_pass: {
    description: 'a road user passes beside the ego vehicle closely',
    rule: 'a run of consecutive points laterally outside the corridor whose ground distance (camera model) is under max_distance_m; one event per run, with the nearest approach',
    needs: 'tracks, the camera model',
  },
  hard_braking: {
    description: 'the ego vehicle brakes hard',
    rule: "from the IMU when the session has inertial timeline events (each of kind hard_braking becomes one); otherwise from frames' ego speed: a run of consecutive frame pairs decelerating at min_decel_mps2 or more, lasting min_duration_ms",
    needs: 'timeline_events (source inertial) or frames.context.ego_speed_mps',
  },
};

export function drivingEventTaxonomy() {
  return {
    deriver_version: DERIVER_VERSION,
    corridor: EGO_CORRIDOR,
    states: DRIVING_EVENT_STATES,
    sources: DRIVING_EVENT_SOURCES,
    kinds: DRIVING_EVENT_KINDS.map((name) => ({
      name,
      ...DRIVING_EVENT_INFO[name],
      participants: DRIVING_EVENT_PARTICIPANTS[name],
      thresholds: DRIVING_EVENT_THRESHOLDS[name],
    })),
  };
}

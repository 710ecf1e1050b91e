import { z } from 'zod';
import { DEFAULT_QA_THRESHOLDS } from '../../../core/ego/consistency';
import { DEFAULT_INERTIAL_THRESHOLDS, INERTIAL_EVENT_KINDS } from '../../../core/ego/inertial';
import { DEFAULT_SCENE_THRESHOLDS } from '../../../core/ego/scene';
import { EGO_KINDS } from '../../../core/ego/streams';
import { TIMELINE_SOURCES } from '../../../core/ego/timeline';
import { boundedAttrs } from '../../http/bounded-attrs';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Bodies and queries of the inertial group (docs/ego-state.md); the spec shows none, so they are ours. */

/** Numbers come as JSON numbers in bodies and as strings in queries. */
const number = (inQuery: boolean) => (inQuery ? z.coerce.number() : z.number());
const ms = (inQuery: boolean, description: string) => number(inQuery).min(0).meta({ description });

const inertialThresholds = (inQuery: boolean) => {
  const d = DEFAULT_INERTIAL_THRESHOLDS;
  const n = () => number(inQuery);
  return {
    brake_mps2: n()
      .positive()
      .max(100)
      .default(d.brake_mps2)
      .meta({ description: 'hard braking: −ax at least this (m/s²)' }),
    accel_mps2: n()
      .positive()
      .max(100)
      .default(d.accel_mps2)
      .meta({ description: 'hard acceleration: ax at least this (m/s²)' }),
    turn_yaw_rad_s: n()
      .positive()
      .max(20)
      .default(d.turn_yaw_rad_s)
      .meta({ description: 'sharp turn: |gz| at least this (rad/s) …' }),
    turn_lateral_mps2: n()
      .min(0)
      .max(100)
      .default(d.turn_lateral_mps2)
      .meta({ description: '… and |ay| at least this (m/s²)' }),
    bump_mps2: n()
      .positive()
      .max(100)
      .default(d.bump_mps2)
      .meta({ description: 'bump: |az − median az| at least this (m/s²)' }),
    min_duration_ms: n()
      .min(0)
      .max(60_000)
      .default(d.min_duration_ms)
      .meta({ description: 'braking, acceleration and turns must last this long (ms)' }),
    merge_gap_ms: n()
      .min(0)
      .max(60_000)
      .default(d.merge_gap_ms)
      .meta({ description: 'runs closer than this are one event (ms)' }),
    smooth_ms: n()
      .min(0)
      .max(10_000)
      .default(d.smooth_ms)
      .meta({ description: 'centred moving mean of ax, ay, gz over this window (ms); 0: raw' }),
  };
};
const imuTopic = z
  .string()
  .min(1)
  .max(500)
  .optional()
  .meta({ description: 'the IMU stream, when the session has several' });

export const InertialQuery = z.strictObject({
  topic: imuTopic,
  kind: z.enum(INERTIAL_EVENT_KINDS).optional(),
  ...inertialThresholds(true),
});

export const InertialAutoIn = z.strictObject({ topic: imuTopic, ...inertialThresholds(false) });

export const SceneIn = z.strictObject({
  phash_distance: z.number().int().min(1).max(64).default(DEFAULT_SCENE_THRESHOLDS.phash_distance).meta({
    description: 'consecutive frames whose perceptual hashes differ in at least this many of 64 bits',
  }),
  luma_delta: z
    .number()
    .positive()
    .max(255)
    .default(DEFAULT_SCENE_THRESHOLDS.luma_delta)
    .meta({ description: 'consecutive frames whose mean luma (0–255) moves by at least this' }),
});

export const CorrelateIn = z.strictObject({
  tolerance_ms: ms(false, 'each timeline event is widened by this much on both sides').max(60_000).default(0),
  replace: z.boolean().default(false).meta({ description: 'also re-tie (or untie) events tied already' }),
});

export const QaQuery = z.strictObject({
  max_gap_ms: number(true).positive().max(3_600_000).default(DEFAULT_QA_THRESHOLDS.max_gap_ms),
  min_coverage: number(true).min(0).max(1).default(DEFAULT_QA_THRESHOLDS.min_coverage),
  speed_tolerance_mps: number(true).min(0).max(100).default(DEFAULT_QA_THRESHOLDS.speed_tolerance_mps),
  track_time_tolerance_ms: number(true)
    .min(0)
    .max(60_000)
    .default(DEFAULT_QA_THRESHOLDS.track_time_tolerance_ms),
});

const windowQuery = {
  from_ms: ms(true, 'only what ends at or after this time').optional(),
  to_ms: ms(true, 'only what starts at or before this time').optional(),
};

export const EgoStateQuery = z.strictObject({
  kind: z.enum(EGO_KINDS).optional(),
  topic: z.string().min(1).max(500).optional(),
  at_ms: ms(
    true,
    "every channel's value at this time (linear interpolation; null outside the stream)",
  ).optional(),
  samples: booleanParam.default(false).meta({ description: 'also return the samples of [from_ms, to_ms]' }),
  ...windowQuery,
  limit: limitParam(5000, 100_000).meta({ description: 'samples per stream at most' }),
});

export const TimelineQuery = z.strictObject({
  ...windowQuery,
  include_rejected: booleanParam
    .default(false)
    .meta({ description: 'also driving events a reviewer rejected' }),
});

const kind = z
  .string()
  .regex(/^[a-z][a-z0-9_]{0,63}$/, 'snake_case, at most 64 characters')
  .meta({
    description:
      'what happened (the detectors write hard_braking, hard_acceleration, sharp_turn, bump, scene_change)',
  });
const attrs = boundedAttrs('a note on the event');
const start = ms(false, "start on the frames' clock (ms from the drive's start)");
const end = ms(false, 'end (ms), at or after the start; null or absent for an instant').nullable();
const label = z.string().min(1).max(200).nullable();
const endNotBeforeStart = (e: { t_start_ms?: number | undefined; t_end_ms?: number | null | undefined }) =>
  e.t_start_ms === undefined || e.t_end_ms === undefined || e.t_end_ms === null || e.t_end_ms >= e.t_start_ms;

export const TimelineEventIn = z
  .strictObject({
    kind,
    t_start_ms: start,
    t_end_ms: end.optional(),
    label: label.optional(),
    attrs: attrs.default({}),
  })
  .refine(endNotBeforeStart, { message: 'before t_start_ms', path: ['t_end_ms'] });

export const TimelineEventPatch = z
  .strictObject({
    kind: kind.optional(),
    t_start_ms: start.optional(),
    t_end_ms: end.optional(),
    label: label.optional(),
    attrs: attrs.optional().meta({ description: 'replaces the attrs whole' }),
    driving_event_id: z
      .uuid()
      .nullable()
      .optional()
      .meta({ description: 'ties the event to a driving event of its session by hand; null unties it' }),
  })
  .refine((p) => Object.keys(p).length > 0, { message: 'give at least one field to change' })
  .refine(endNotBeforeStart, { message: 'before t_start_ms', path: ['t_end_ms'] });

export const TimelineEventsQuery = z.strictObject({
  source: z.enum(TIMELINE_SOURCES).optional(),
  kind: kind.optional(),
  ...windowQuery,
  limit: limitParam(500, 5000),
});

import { z } from 'zod';
import { DEFAULT_DETECTOR } from '../../../core/lanes/detect';
import { LANE_TYPES } from '../../../core/lanes/vocabulary';
import { boundedAttrs } from '../../http/bounded-attrs';
import { booleanParam } from '../../http/session-reads';

/** Bodies and queries of the lane routes (docs/lanes.md); the spec shows none, so they are ours. */

const coord = z.number().finite().min(0).max(100_000);

const points = z
  .array(z.tuple([coord, coord]))
  .min(2)
  .max(1_000)
  .meta({ description: '[[x, y], ...] in frame pixels, at least two distinct points, all on the frame' });

const laneType = z
  .enum(LANE_TYPES)
  .meta({ description: `one of ${LANE_TYPES.join(', ')} (docs/lanes.md "Vocabulary")` });

const attrs = boundedAttrs('notes on the lane');

const conf = z.number().min(0).max(1).nullable();
const laneGroupId = z.uuid().nullable().meta({ description: 'the same physical lane across frames' });

export const LaneIn = z.strictObject({
  points,
  lane_type: laneType.default('unknown'),
  conf: conf.default(null),
  lane_group_id: laneGroupId.default(null),
  attrs: attrs.default({}),
});

export const LaneEditIn = z
  .strictObject({
    expected_version: z
      .number()
      .int()
      .min(1)
      .max(2 ** 31 - 1)
      .meta({ description: 'the version the edit was made on; another stored version answers 409' }),
    points: points.optional(),
    lane_type: laneType.optional(),
    conf: conf.optional(),
    lane_group_id: laneGroupId.optional(),
    attrs: attrs.optional().meta({ description: 'replaces the attrs whole' }),
  })
  .refine((b) => Object.keys(b).length > 1, { message: 'give at least one field to change' });

export const LaneProposeIn = z.strictObject({
  roi_top: z
    .number()
    .min(0)
    .max(0.95)
    .default(DEFAULT_DETECTOR.roiTop)
    .meta({ description: 'rows above this share of the height are not searched' }),
  max_lanes: z.int().min(1).max(20).default(DEFAULT_DETECTOR.maxLanes),
  min_conf: z.number().min(0).max(1).default(DEFAULT_DETECTOR.minConf),
});

export const LanePropagateIn = z.strictObject({
  lane_ids: z
    .array(z.uuid())
    .min(1)
    .max(500)
    .optional()
    .meta({ description: "only these lanes of the frame (default: all the frame's lanes)" }),
});

export const LaneClassifyIn = z.strictObject({
  overwrite: z.boolean().default(false).meta({ description: 'also re-type lanes whose type a person set' }),
});

export const LaneLinkIn = z.strictObject({
  max_distance_px: z
    .number()
    .gt(0)
    .max(10_000)
    .optional()
    .meta({ description: 'link limit in pixels (default 3% of the frame width, at least 4 px)' }),
});

export const TypeCoverageQuery = z.strictObject({
  session_id: z.uuid().optional(),
  by_session: booleanParam.default(false),
});

/** The lane vocabulary (docs/lanes.md "Vocabulary"): what `lane_type` may hold, and the sources. */

export const LANE_TYPES = [
  'solid',
  'dashed',
  'double_solid',
  'solid_dashed',
  'road_edge',
  'botts_dots',
  'unknown',
] as const;
export type LaneType = (typeof LANE_TYPES)[number];

export const LANE_TYPE_INFO: Record<LaneType, string> = {
  solid: 'one continuous painted line',
  dashed: 'one painted line broken into dashes (also two dashed lines side by side, attrs.markings 2)',
  double_solid: 'two continuous painted lines side by side',
  solid_dashed: 'a continuous and a dashed line side by side (attrs.solid_side says which is solid)',
  road_edge: 'the edge of the road where no line is painted',
  botts_dots: 'raised dots or reflectors in a row instead of a painted line',
  unknown: 'not classified yet, or no rule fits',
};

export const LANE_SOURCES = ['human', 'proposed', 'propagated'] as const;
export type LaneSource = (typeof LANE_SOURCES)[number];

export const LANE_COLOURS = ['white', 'yellow', 'other'] as const;
export type LaneColour = (typeof LANE_COLOURS)[number];

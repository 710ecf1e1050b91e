import type { Box } from '../geometry/boxes';

/**
 * A track's intent (docs/track-events.md): what the object is doing over the whole track. People
 * set any value of the vocabulary; the motion rules below propose only the ones image motion can
 * tell apart, and say so (`proposable`).
 */
export const INTENTS = [
  'stationary',
  'straight',
  'turning_left',
  'turning_right',
  'crossing',
  'lane_change_left',
  'lane_change_right',
  'u_turn',
  'parking',
  'yielding',
  'unknown',
] as const;
export type Intent = (typeof INTENTS)[number];

export const INTENT_INFO: Record<Intent, { description: string; proposable: boolean }> = {
  stationary: { description: 'does not move in the image', proposable: true },
  straight: { description: 'moves without turning, mostly along the view', proposable: true },
  turning_left: { description: 'its direction of motion turns anticlockwise on screen', proposable: true },
  turning_right: { description: 'its direction of motion turns clockwise on screen', proposable: true },
  crossing: { description: 'moves across the view, left to right or right to left', proposable: true },
  lane_change_left: { description: 'changes to the lane on its left', proposable: false },
  lane_change_right: { description: 'changes to the lane on its right', proposable: false },
  u_turn: { description: 'reverses its direction of travel', proposable: false },
  parking: { description: 'manoeuvres into or out of a parking space', proposable: false },
  yielding: { description: 'slows or waits to let another road user pass', proposable: false },
  unknown: { description: 'cannot be told (too few frames, or a person left it open)', proposable: true },
};

/** Changes whenever a rule or threshold changes what is proposed; stored with an applied proposal. */
export const INTENT_RULES_VERSION = 'motion-rules-1';

/**
 * Distances are in box diagonals (the median diagonal of the track), so a far small object and a
 * near large one moving alike are judged alike.
 */
export const INTENT_THRESHOLDS = {
  /** Fewer points than this: `unknown`. */
  min_points: 3,
  /** Net displacement of the centre below this many diagonals: `stationary`. */
  stationary_max_displacement: 0.5,
  /** A third of the track must move at least this far for its heading to count. */
  min_heading_displacement: 0.25,
  /** Heading change between the first and last third from which the track turns. */
  turn_min_deg: 30,
  /** Horizontal share of the net displacement (|dx| / |d|) from which motion is across the view. */
  crossing_min_horizontal_share: 0.8,
  /** …and at least this many diagonals sideways. */
  crossing_min_displacement: 1.5,
} as const;

/** A trajectory point as retrack stores it (core/tracking/session.ts StoredTrajectoryPoint). */
export interface IntentPoint {
  frame_index: number;
  ts_ms: number;
  box: Box;
}

export interface IntentEvidence {
  points: number;
  duration_s: number;
  /** Median box diagonal, pixels: the unit of the distances below. */
  scale_px: number;
  net_displacement: number;
  path_length: number;
  /** Horizontal share of the net displacement. */
  horizontal_share: number | null;
  /** Direction of motion in image coordinates (x right, y down), degrees; null when it barely moves. */
  heading_in_deg: number | null;
  heading_out_deg: number | null;
  /** Out minus in, in (−180, 180]: positive is clockwise on screen. */
  turn_deg: number | null;
  /** The rule that decided, in words. */
  rule: string;
}

export interface IntentProposal {
  intent: Intent;
  rules_version: string;
  evidence: IntentEvidence;
}

const centre = (b: Box): [number, number] => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
const diagonal = (b: Box): number => Math.hypot(b[2] - b[0], b[3] - b[1]);
const degrees = (dx: number, dy: number): number => (Math.atan2(dy, dx) * 180) / Math.PI;
const round = (x: number, digits = 3): number => Number(x.toFixed(digits));

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

/** Wraps an angle difference into (−180, 180]. */
export function wrapDegrees(d: number): number {
  const w = ((((d + 180) % 360) + 360) % 360) - 180;
  return w === -180 ? 180 : w;
}

/**
 * Proposes an intent from a track's boxes by the documented rules, in order: too few points →
 * unknown; barely moved → stationary; heading turned by `turn_min_deg` or more → turning left or
 * right; moved mostly sideways and far enough → crossing; else straight. Image motion only: the
 * ego vehicle's own motion is not taken out, so a car followed at the same speed looks stationary.
 */
export function proposeIntent(trajectory: readonly IntentPoint[]): IntentProposal {
  const t = INTENT_THRESHOLDS;
  const pts = [...trajectory].sort((a, b) => a.frame_index - b.frame_index);
  const centres = pts.map((p) => centre(p.box));
  const scale = pts.length ? Math.max(median(pts.map((p) => diagonal(p.box))), 1e-9) : 1;
  const along = (a: number, b: number): [number, number] => [
    (centres[b]![0] - centres[a]![0]) / scale,
    (centres[b]![1] - centres[a]![1]) / scale,
  ];
  const last = pts.length - 1;
  const [dx, dy] = pts.length ? along(0, last) : [0, 0];
  const net = Math.hypot(dx, dy);
  let path = 0;
  for (let i = 1; i < pts.length; i++) path += Math.hypot(...along(i - 1, i));
  const third = Math.max(1, Math.round(last / 3));
  const heading = (a: number, b: number): number | null => {
    if (b <= a || b > last) return null;
    const [hx, hy] = along(a, b);
    return Math.hypot(hx, hy) >= t.min_heading_displacement ? degrees(hx, hy) : null;
  };
  const headingIn = pts.length >= t.min_points ? heading(0, third) : null;
  const headingOut = pts.length >= t.min_points ? heading(last - third, last) : null;
  const turn = headingIn !== null && headingOut !== null ? wrapDegrees(headingOut - headingIn) : null;
  const horizontalShare = net > 0 ? Math.abs(dx) / net : null;

  const decide = (): [Intent, string] => {
    if (pts.length < t.min_points) return ['unknown', `fewer than ${t.min_points} points`];
    if (net < t.stationary_max_displacement)
      return ['stationary', `net displacement under ${t.stationary_max_displacement} box diagonals`];
    if (turn !== null && Math.abs(turn) >= t.turn_min_deg)
      return [
        turn > 0 ? 'turning_right' : 'turning_left',
        `heading turned ${turn > 0 ? 'clockwise' : 'anticlockwise'} by ${t.turn_min_deg}° or more`,
      ];
    if (
      horizontalShare !== null &&
      horizontalShare >= t.crossing_min_horizontal_share &&
      Math.abs(dx) >= t.crossing_min_displacement
    )
      return [
        'crossing',
        `moved sideways at least ${t.crossing_min_displacement} box diagonals, ${t.crossing_min_horizontal_share * 100}% or more of its displacement`,
      ];
    return ['straight', 'moved without turning or crossing'];
  };
  const [intent, rule] = decide();
  const span = pts.length ? pts[last]!.ts_ms - pts[0]!.ts_ms : 0;
  const r = (x: number | null) => (x === null ? null : round(x));
  return {
    intent,
    rules_version: INTENT_RULES_VERSION,
    evidence: {
      points: pts.length,
      duration_s: round(span / 1000),
      scale_px: round(pts.length ? scale : 0),
      net_displacement: round(net),
      path_length: round(path),
      horizontal_share: r(horizontalShare),
      heading_in_deg: r(headingIn),
      heading_out_deg: r(headingOut),
      turn_deg: r(turn),
      rule,
    },
  };
}

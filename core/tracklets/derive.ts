import type { Box } from '../geometry/boxes';
import { INTENT_THRESHOLDS } from '../tracking/intent';
import { centre, diagonal, inFrameOrder, round, scaleOf, type TrackletPoint } from './points';

/**
 * Attributes derived from a track's boxes (docs/tracklets.md), stored in `Track.attrs.derived`.
 * Image motion relative to the camera: the ego vehicle's own motion is not taken out. Bump the
 * version whenever a rule or threshold changes what is derived.
 */
export const DERIVE_RULES_VERSION = 'tracklet-derive-1';

export const DERIVE_THRESHOLDS = {
  /** Net centre displacement below this many median diagonals: stationary (the intent rules' threshold). */
  stationary_max_displacement: INTENT_THRESHOLDS.stationary_max_displacement,
  /** A box edge this close (px) to the image edge: the object is cut by the frame. */
  border_px: 2,
  /** The last box's diagonal over the first's beyond this (or below its inverse): approaching (receding). */
  scale_change: 1.2,
} as const;

export interface DerivePoint extends TrackletPoint {
  /** The frame's size; null where the frame does not say. */
  width: number | null;
  height: number | null;
}

export type Direction = 'left' | 'right' | 'up' | 'down';

export interface DerivedAttributes {
  rules_version: string;
  points: number;
  duration_s: number;
  motion: 'moving' | 'stationary' | 'unknown';
  /** The dominant image direction of the net displacement; null unless moving. */
  direction: Direction | null;
  heading_deg: number | null;
  net_displacement_px: number;
  path_length_px: number;
  /** Path length over duration; null for a track of one instant. */
  mean_speed_px_s: number | null;
  scale_px: number;
  scale_trend: 'approaching' | 'receding' | 'steady' | 'unknown';
  /** Frames whose box touches the image edge (truncation). */
  truncated_frames: number;
  truncated_share: number;
  /** Frames of the session inside the track's span without an object of the track: likely occlusion. */
  gap_frames: number;
}

const touchesBorder = (b: Box, w: number | null, h: number | null): boolean => {
  const m = DERIVE_THRESHOLDS.border_px;
  return b[0] <= m || b[1] <= m || (w !== null && b[2] >= w - m) || (h !== null && b[3] >= h - m);
};

function directionOf(dx: number, dy: number): Direction {
  if (Math.abs(dx) >= Math.abs(dy)) return dx >= 0 ? 'right' : 'left';
  return dy >= 0 ? 'down' : 'up';
}

/**
 * Derived attributes of a track from its objects' boxes; `sessionFramesInSpan` is how many frames
 * the session has from the track's first frame to its last (both included), for the gaps.
 */
export function deriveAttributes(
  points: readonly DerivePoint[],
  sessionFramesInSpan: number,
): DerivedAttributes {
  const pts = inFrameOrder(points);
  const t = DERIVE_THRESHOLDS;
  const scale = pts.length ? scaleOf(pts) : 0;
  const centres = pts.map((p) => centre(p.box));
  const first = centres[0] ?? [0, 0];
  const last = centres.at(-1) ?? [0, 0];
  const [dx, dy] = [last[0] - first[0], last[1] - first[1]];
  const net = Math.hypot(dx, dy);
  const path = centres
    .slice(1)
    .reduce((s, c, i) => s + Math.hypot(c[0] - centres[i]![0], c[1] - centres[i]![1]), 0);
  const duration = pts.length ? (pts.at(-1)!.ts_ms - pts[0]!.ts_ms) / 1000 : 0;
  const motion =
    pts.length < 2 ? 'unknown' : net < t.stationary_max_displacement * scale ? 'stationary' : 'moving';
  const growth = pts.length >= 2 ? diagonal(pts.at(-1)!.box) / Math.max(diagonal(pts[0]!.box), 1e-9) : null;
  const truncated = pts.filter((p) => touchesBorder(p.box, p.width, p.height)).length;
  return {
    rules_version: DERIVE_RULES_VERSION,
    points: pts.length,
    duration_s: round(duration),
    motion,
    direction: motion === 'moving' ? directionOf(dx, dy) : null,
    heading_deg: motion === 'moving' ? round((Math.atan2(dy, dx) * 180) / Math.PI, 1) : null,
    net_displacement_px: round(net),
    path_length_px: round(path),
    mean_speed_px_s: duration > 0 ? round(path / duration) : null,
    scale_px: round(scale),
    scale_trend:
      growth === null
        ? 'unknown'
        : growth > t.scale_change
          ? 'approaching'
          : growth < 1 / t.scale_change
            ? 'receding'
            : 'steady',
    truncated_frames: truncated,
    truncated_share: pts.length ? round(truncated / pts.length) : 0,
    gap_frames: Math.max(0, sessionFramesInSpan - new Set(pts.map((p) => p.frame_index)).size),
  };
}

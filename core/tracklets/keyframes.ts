import { z } from 'zod';
import type { Box } from '../geometry/boxes';
import { wrapDegrees } from '../tracking/intent';
import { centre, diagonal, inFrameOrder, round, scaleOf, type TrackletPoint } from './points';

/**
 * Keyframe suggestion (docs/tracklets.md): the frames from which linear interpolation (the one
 * `interpolate-keyframed` runs, box corners linear in time) reproduces the whole track within a
 * tolerance, plus the frames where the direction of motion turns. Bump the version whenever a rule
 * or default changes what is suggested.
 */
export const KEYFRAME_RULES_VERSION = 'keyframe-rules-1';

export const KeyframeThresholds = z.strictObject({
  tolerance: z.coerce.number().gt(0).max(10).default(0.2).meta({
    description:
      'largest distance, in median box diagonals, between a box centre and where interpolation between the neighbouring keyframes puts it',
  }),
  size_tolerance: z.coerce.number().gt(0).max(10).default(0.25).meta({
    description: 'largest relative difference between a box diagonal and the interpolated one (0.25 = 25 %)',
  }),
  turn_deg: z.coerce.number().gt(0).max(180).default(30).meta({
    description: 'a change of the direction of motion from this many degrees marks a keyframe',
  }),
  min_move: z.coerce.number().min(0).max(10).default(0.1).meta({
    description: 'a stretch moving less than this many diagonals has no direction (jitter is not a turn)',
  }),
});
export type KeyframeThresholds = z.infer<typeof KeyframeThresholds>;
export const DEFAULT_KEYFRAME_THRESHOLDS: KeyframeThresholds = KeyframeThresholds.parse({});

export type KeyframeReason = 'first' | 'last' | 'motion' | 'size' | 'direction';

export interface SuggestedKeyframe {
  frame_id: string;
  frame_index: number;
  object_id: string;
  reasons: KeyframeReason[];
}

const lerpBox = (a: Box, b: Box, t: number): Box => a.map((x, k) => x + (b[k]! - x) * t) as Box;

/** Where between two points a third lies in time (frame index when the two share a timestamp). */
function timeBetween(p: TrackletPoint, a: TrackletPoint, b: TrackletPoint): number {
  if (b.ts_ms !== a.ts_ms) return (p.ts_ms - a.ts_ms) / (b.ts_ms - a.ts_ms);
  return b.frame_index === a.frame_index
    ? 0
    : (p.frame_index - a.frame_index) / (b.frame_index - a.frame_index);
}

/**
 * How far a point is from the interpolation between two others, as multiples of the tolerances:
 * above 1 it needs a keyframe. The time-synchronised distance (not the distance to the segment, as
 * plain Ramer–Douglas–Peucker takes) also catches an object that stops and goes on along one line.
 */
function deviation(p: TrackletPoint, a: TrackletPoint, b: TrackletPoint, tolPx: number, sizeTol: number) {
  const expected = lerpBox(a.box, b.box, timeBetween(p, a, b));
  const [cx, cy] = centre(p.box);
  const [ex, ey] = centre(expected);
  const motion = Math.hypot(cx - ex, cy - ey) / tolPx;
  const d = Math.max(diagonal(p.box), 1e-9);
  const e = Math.max(diagonal(expected), 1e-9);
  const size = Math.abs(Math.log(d / e)) / Math.log(1 + sizeTol);
  return { error: Math.max(motion, size), reason: (motion >= size ? 'motion' : 'size') as KeyframeReason };
}

/** Ramer–Douglas–Peucker over the points by the time-synchronised deviation: the indexes kept, with why. */
function simplify(
  points: readonly TrackletPoint[],
  tolPx: number,
  sizeTol: number,
): Map<number, KeyframeReason> {
  const kept = new Map<number, KeyframeReason>();
  const stack: Array<[number, number]> = [[0, points.length - 1]];
  while (stack.length) {
    const [a, b] = stack.pop()!;
    let worst = { i: -1, error: 1, reason: 'motion' as KeyframeReason };
    for (let i = a + 1; i < b; i++) {
      const d = deviation(points[i]!, points[a]!, points[b]!, tolPx, sizeTol);
      if (d.error > worst.error) worst = { i, ...d };
    }
    if (worst.i < 0) continue;
    kept.set(worst.i, worst.reason);
    stack.push([a, worst.i], [worst.i, b]);
  }
  return kept;
}

/**
 * Interior points where the direction of motion turns by at least `turn_deg`: the heading over the
 * two points before against the two after (so the second and last but one point have none: over
 * one step, jitter reads as a turn), both stretches moving at least `min_move` diagonals; of
 * consecutive turning points only the sharpest counts.
 */
function turns(points: readonly TrackletPoint[], t: KeyframeThresholds, scale: number): number[] {
  const heading = (a: number, b: number): number | null => {
    const [ax, ay] = centre(points[a]!.box);
    const [bx, by] = centre(points[b]!.box);
    if (Math.hypot(bx - ax, by - ay) < t.min_move * scale) return null;
    return (Math.atan2(by - ay, bx - ax) * 180) / Math.PI;
  };
  const turnAt = (i: number): number => {
    if (i < 2 || i > points.length - 3) return 0;
    const hin = heading(i - 2, i);
    const hout = heading(i, i + 2);
    return hin === null || hout === null ? 0 : Math.abs(wrapDegrees(hout - hin));
  };
  const amount = points.map((_, i) => turnAt(i));
  return amount.flatMap((x, i) =>
    x >= t.turn_deg && x >= (amount[i - 1] ?? 0) && x > (amount[i + 1] ?? 0) ? [i] : [],
  );
}

/** The keyframes to suggest for a track, in frame order; always its first and last object. */
export function suggestKeyframes(
  trackPoints: readonly TrackletPoint[],
  thresholds: KeyframeThresholds = DEFAULT_KEYFRAME_THRESHOLDS,
): { keyframes: SuggestedKeyframe[]; scale_px: number } {
  const points = inFrameOrder(trackPoints);
  if (!points.length) return { keyframes: [], scale_px: 0 };
  const scale = scaleOf(points);
  const reasons = new Map<number, Set<KeyframeReason>>();
  const add = (i: number, r: KeyframeReason) => reasons.set(i, (reasons.get(i) ?? new Set()).add(r));
  add(0, 'first');
  add(points.length - 1, 'last');
  for (const [i, r] of simplify(points, thresholds.tolerance * scale, thresholds.size_tolerance)) add(i, r);
  for (const i of turns(points, thresholds, scale)) add(i, 'direction');
  const order: KeyframeReason[] = ['first', 'last', 'motion', 'size', 'direction'];
  return {
    keyframes: [...reasons.keys()]
      .sort((a, b) => a - b)
      .map((i) => ({
        frame_id: points[i]!.frame_id,
        frame_index: points[i]!.frame_index,
        object_id: points[i]!.object_id,
        reasons: order.filter((r) => reasons.get(i)!.has(r)),
      })),
    scale_px: round(scale),
  };
}

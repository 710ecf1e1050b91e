import { RefusedError } from '../errors';
import {
  consecutiveSpans,
  fillAnchors,
  interpolateShape,
  type SessionFrameRef,
  type Span,
  type TrackObject,
} from './interpolate';

/**
 * Track gap fill (docs/quality.md "Track gap fill"), pure: the frames inside a track where the
 * object is missing — between two consecutive anchors of the track, frames that hold no object of
 * it at all — and whether interpolation may fill them.
 */

export const DEFAULT_MAX_GAP = 5;

/** Why a gap is not filled. */
export type GapSkip = 'too_long' | 'class_mismatch' | 'unmatched_polygons';

export interface TrackGap {
  span: Span;
  /** The frames between the anchors without any object of the track, in frame order. */
  missing: SessionFrameRef[];
  action: 'fill' | 'skip';
  reason?: GapSkip;
}

/**
 * Every gap of a track: for each pair of consecutive anchors (a person's or a detector's box, a
 * keyframe; not interpolation's own fills, not rejected ones — the anchors of a plain interpolation),
 * the frames between that hold no object of the track. A frame holding a fill, a rejected box or
 * any other object of the track is not missing: a rejected box says a person looked. A gap is
 * filled when it is at most `maxGap` frames long (a longer one is more likely an occlusion the
 * object left through, or two objects under one identity) and interpolation can cross it.
 */
export function findTrackGaps(
  frames: readonly SessionFrameRef[],
  objects: readonly TrackObject[],
  maxGap: number,
): TrackGap[] {
  const occupied = new Set(objects.map((o) => o.frameId));
  return consecutiveSpans(fillAnchors(objects)).flatMap((span): TrackGap[] => {
    const missing = frames.filter(
      (f) => f.index > span.from.frameIndex && f.index < span.to.frameIndex && !occupied.has(f.frameId),
    );
    if (!missing.length) return [];
    const skip = (reason: GapSkip): TrackGap => ({ span, missing, action: 'skip', reason });
    if (missing.length > maxGap) return [skip('too_long')];
    if (span.from.className !== span.to.className) return [skip('class_mismatch')];
    try {
      interpolateShape(span.from, span.to, 0.5);
    } catch (err) {
      if (err instanceof RefusedError) return [skip('unmatched_polygons')];
      throw err;
    }
    return [{ span, missing, action: 'fill' }];
  });
}

import { RefusedError } from '../errors';
import { enclosingBox, unionBox, type Box } from '../geometry';
import { normaliseSource } from '../objects/sources';

/**
 * Interpolation along a track (docs/track-interpolation.md), pure: the caller reads the track's
 * session and objects, this plans what each frame between two anchors gets, the caller writes it.
 */

/**
 * The reserved key of `AnnoObject.attrs` that marks a keyframe. attrs are the object's visible
 * attributes, so the key is one no ontology attribute uses, and a boolean true is the only value
 * that counts (an attribute that happens to say "yes" does not).
 */
export const KEYFRAME_ATTR = 'keyframe';

export const isKeyframe = (attrs: unknown): boolean =>
  typeof attrs === 'object' && attrs !== null && (attrs as Record<string, unknown>)[KEYFRAME_ATTR] === true;

/** The shape interpolation carries: the box, and polylines when the anchors have them. */
export interface TrackShape {
  bbox: Box;
  polyline: number[][] | null;
}

/** One object of the track, where it stands in the session. */
export interface TrackObject extends TrackShape {
  objectId: string;
  frameId: string;
  frameIndex: number;
  tsMs: number;
  className: string;
  source: string;
  state: string;
  keyframe: boolean;
}

/** One frame of the track's session. */
export interface SessionFrameRef {
  frameId: string;
  index: number;
  tsMs: number;
}

/** A frame's shape between two anchors: what a created or recomputed fill holds. */
interface FrameFill {
  frameId: string;
  frameIndex: number;
  shape: TrackShape;
  className: string;
  /** Where between the anchors, by time: 0 at `from`, 1 at `to`. */
  t: number;
  fromObjectId: string;
  toObjectId: string;
}

/** What interpolation did, or would do, on one frame. */
export type FramePlan =
  | (FrameFill & { action: 'create' })
  | (FrameFill & { action: 'update'; objectId: string })
  | {
      frameId: string;
      frameIndex: number;
      action: 'left';
      objectId: string;
      reason: 'keyframe' | 'rejected' | 'not_interpolated';
    };

/**
 * An object interpolation may overwrite: one it wrote itself (either spelling) that nobody made an
 * anchor and nobody rejected (a rejected fill says the frame holds no such box; refilling would undo that).
 */
export const isReplaceable = (o: Pick<TrackObject, 'source' | 'keyframe' | 'state'>): boolean =>
  !o.keyframe && o.state !== 'rejected' && normaliseSource(o.source) === 'interpolated';

/** A pair of anchors whose frames between are filled. */
export interface Span {
  from: TrackObject;
  to: TrackObject;
}

const lerp = (a: number, b: number, t: number): number => a + (b - a) * t;

/** Polylines the two anchors share vertex for vertex; anything else is refused, naming both. */
function matchedPolylines(from: TrackObject, to: TrackObject): boolean {
  const a = from.polyline;
  const b = to.polyline;
  if (a === null && b === null) return false;
  const counts = (p: number[][] | null) =>
    p === null ? 'none' : `[${p.map((r) => r.length / 2).join(', ')}]`;
  if (a === null || b === null || a.length !== b.length || a.some((ring, i) => ring.length !== b[i]!.length))
    throw new RefusedError(
      `objects ${from.objectId} and ${to.objectId} have polygons with unmatched vertex counts (${counts(a)} vs ${counts(b)}); interpolation needs the same rings with the same vertices`,
      { from_object_id: from.objectId, to_object_id: to.objectId },
    );
  return true;
}

/** The anchors' shape at `t`: box corners linearly, polylines vertex by vertex; bbox encloses the polylines. */
export function interpolateShape(from: TrackObject, to: TrackObject, t: number): TrackShape {
  const bbox = from.bbox.map((v, i) => lerp(v, to.bbox[i]!, t)) as Box;
  if (!matchedPolylines(from, to)) return { bbox, polyline: null };
  const polyline = from.polyline!.map((ring, r) => ring.map((v, i) => lerp(v, to.polyline![r]![i]!, t)));
  return { bbox: unionBox([bbox, enclosingBox(polyline.flat())]), polyline };
}

/**
 * Where a frame lies between two anchors, by timestamp: frames are not evenly spaced once ingest
 * dropped near-duplicates. Anchors with one timestamp (a badly stamped source) fall back to index.
 */
function fraction(from: TrackObject, to: TrackObject, frame: SessionFrameRef): number {
  if (to.tsMs !== from.tsMs) return (frame.tsMs - from.tsMs) / (to.tsMs - from.tsMs);
  return (frame.index - from.frameIndex) / (to.frameIndex - from.frameIndex);
}

function refuseClassMismatch(span: Span): void {
  if (span.from.className !== span.to.className)
    throw new RefusedError(
      `objects ${span.from.objectId} (${span.from.className}) and ${span.to.objectId} (${span.to.className}) are of different classes; relabel one before interpolating between them`,
      { from_object_id: span.from.objectId, to_object_id: span.to.objectId },
    );
}

/** Spans between consecutive anchors in frame order; anchors on one frame span nothing. */
export function consecutiveSpans(anchors: readonly TrackObject[]): Span[] {
  const sorted = [...anchors].sort(
    (a, b) => a.frameIndex - b.frameIndex || a.objectId.localeCompare(b.objectId),
  );
  return sorted
    .slice(1)
    .map((to, i) => ({ from: sorted[i]!, to }))
    .filter((s) => s.to.frameIndex > s.from.frameIndex);
}

/** A span between two named objects, in time order whichever way they were named. */
export function spanBetween(a: TrackObject, b: TrackObject): Span {
  if (a.frameIndex === b.frameIndex)
    throw new RefusedError(
      `objects ${a.objectId} and ${b.objectId} are on the same frame; nothing lies between them`,
    );
  return a.frameIndex < b.frameIndex ? { from: a, to: b } : { from: b, to: a };
}

/** A rejected object is no object of the scene (as for the tracker): it anchors nothing, though it keeps its frame. */
const anchorable = (o: TrackObject): boolean => o.state !== 'rejected';

/**
 * The anchors of a plain interpolation: every object of the track that interpolation did not make
 * itself (a person's box, a detector's) plus keyframes, so re-running it recomputes its own fill.
 */
export const fillAnchors = (objects: readonly TrackObject[]): TrackObject[] =>
  objects.filter((o) => anchorable(o) && !isReplaceable(o));

export const keyframeAnchors = (objects: readonly TrackObject[]): TrackObject[] =>
  objects.filter((o) => anchorable(o) && o.keyframe);

/** Whether a person may name the object as an anchor; the reason when not. */
export function anchorRefusal(o: TrackObject): string | null {
  if (!anchorable(o)) return 'was rejected and anchors nothing';
  if (isReplaceable(o)) return 'was interpolated; mark it a keyframe to interpolate from it';
  return null;
}

/**
 * The keyframed spans on either side of one keyframe: up to the neighbouring keyframes, or none on
 * a side with no keyframe.
 */
export function spansAround(keyframe: TrackObject, objects: readonly TrackObject[]): Span[] {
  return consecutiveSpans(keyframeAnchors(objects)).filter(
    (s) => s.from.objectId === keyframe.objectId || s.to.objectId === keyframe.objectId,
  );
}

/**
 * What each frame strictly between each span's anchors gets: a frame without an object of the
 * track gets a new one; one holding an object interpolation wrote (and nobody made a keyframe) has
 * it recomputed; any other object of the track there — a person's, a detector's, a keyframe — is
 * left. Every span's classes are checked before anything is planned, so a refusal plans nothing.
 * A frame in two spans (overlapping named spans) is planned once, by the first.
 */
export function planInterpolation(
  frames: readonly SessionFrameRef[],
  objects: readonly TrackObject[],
  spans: readonly Span[],
): FramePlan[] {
  spans.forEach(refuseClassMismatch);
  const onFrame = new Map<string, TrackObject[]>();
  for (const o of objects) onFrame.set(o.frameId, [...(onFrame.get(o.frameId) ?? []), o]);
  const planned = new Set<string>();
  const plans: FramePlan[] = [];
  for (const span of spans) {
    const between = frames.filter(
      (f) => f.index > span.from.frameIndex && f.index < span.to.frameIndex && !planned.has(f.frameId),
    );
    for (const frame of between) {
      planned.add(frame.frameId);
      const here = onFrame.get(frame.frameId) ?? [];
      const kept = here.find((o) => !isReplaceable(o));
      const where = { frameId: frame.frameId, frameIndex: frame.index };
      if (kept) {
        plans.push({
          ...where,
          action: 'left',
          objectId: kept.objectId,
          reason: kept.keyframe ? 'keyframe' : kept.state === 'rejected' ? 'rejected' : 'not_interpolated',
        });
        continue;
      }
      const t = fraction(span.from, span.to, frame);
      const filled = {
        shape: interpolateShape(span.from, span.to, t),
        className: span.from.className,
        t,
        fromObjectId: span.from.objectId,
        toObjectId: span.to.objectId,
      };
      // Fills are written under the track's lock, so a frame holds at most one; the oldest is recomputed.
      const own = here[0];
      plans.push(
        own
          ? { ...where, action: 'update', objectId: own.objectId, ...filled }
          : { ...where, action: 'create', ...filled },
      );
    }
  }
  return plans.sort((a, b) => a.frameIndex - b.frameIndex);
}

import { RefusedError } from '../errors';
import type { Box } from '../geometry';
import { isMachineSource } from '../objects/sources';
import type { StoredTrajectoryPoint } from './session';

/**
 * Track edits (docs/track-edits.md), pure: merging two tracks, splitting one at a frame and
 * smoothing a track's machine boxes. The caller reads the tracks and objects, this decides what
 * moves where, the caller writes it.
 */

/** One object of a track, where it stands in the session. */
export interface EditObject {
  objectId: string;
  frameId: string;
  frameIndex: number;
  source: string;
  state: string;
  keyframe: boolean;
  bbox: Box;
}

/** A point of a stored trajectory (the tracker's shape, docs/tracks.md). */
export type TrajectoryPoint = StoredTrajectoryPoint;

/** A switch the tracker reported itself, as stored: `frame` is the frame index, `frame_id` its frame. */
export interface StoredSwitchFlag {
  frame: number;
  frame_id?: string;
  kind: string;
  [key: string]: unknown;
}

const byFrame = (a: { frame_index: number; ts_ms: number }, b: { frame_index: number; ts_ms: number }) =>
  a.frame_index - b.frame_index || a.ts_ms - b.ts_ms;

/** Which track's object stays on a frame both tracks hold. */
export type MergeKeep = 'this' | 'other';

export interface MergePlan {
  /** Objects of the other track that join this one. */
  moved: string[];
  /** Objects that lose their track: the losing side's on a contested frame (kept as objects, not deleted). */
  unlinked: string[];
  /** Frames both tracks held, in frame order. */
  conflicts: Array<{
    frame_id: string;
    frame_index: number;
    this_object_ids: string[];
    other_object_ids: string[];
  }>;
}

/**
 * Decides a merge. A frame holding objects of both tracks cannot stay so (a track is one object
 * per frame), and which box is the object is a person's call: without `keep` it is refused, naming
 * the frames; with it the other side's objects on those frames are unlinked, never deleted.
 */
export function planMerge(
  self: readonly EditObject[],
  other: readonly EditObject[],
  keep: MergeKeep | null,
): MergePlan {
  const selfByFrame = groupByFrame(self);
  const otherByFrame = groupByFrame(other);
  const conflicts = [...otherByFrame.entries()]
    .filter(([frameId]) => selfByFrame.has(frameId))
    .map(([frameId, theirs]) => ({
      frame_id: frameId,
      frame_index: theirs[0]!.frameIndex,
      this_object_ids: selfByFrame.get(frameId)!.map((o) => o.objectId),
      other_object_ids: theirs.map((o) => o.objectId),
    }))
    .sort((a, b) => a.frame_index - b.frame_index);
  if (conflicts.length && keep === null)
    throw new RefusedError(
      `both tracks hold an object on ${conflicts.length} frame(s) (frame indexes ${conflicts
        .map((c) => c.frame_index)
        .join(', ')}); say which to keep there with keep: "this" or "other"`,
      { conflicts },
    );
  const contested = new Set(conflicts.map((c) => c.frame_id));
  const losers = new Set(
    conflicts.flatMap((c) => (keep === 'this' ? c.other_object_ids : c.this_object_ids)),
  );
  return {
    moved: other.filter((o) => !losers.has(o.objectId)).map((o) => o.objectId),
    unlinked: [...self, ...other]
      .filter((o) => contested.has(o.frameId) && losers.has(o.objectId))
      .map((o) => o.objectId),
    conflicts,
  };
}

function groupByFrame(objects: readonly EditObject[]): Map<string, EditObject[]> {
  const groups = new Map<string, EditObject[]>();
  for (const o of objects) groups.set(o.frameId, [...(groups.get(o.frameId) ?? []), o]);
  return groups;
}

/** Both trajectories in one, in time order, without the points of unlinked objects. */
export function mergeTrajectories(
  self: readonly TrajectoryPoint[],
  other: readonly TrajectoryPoint[],
  unlinked: ReadonlySet<string>,
): TrajectoryPoint[] {
  return [...self, ...other].filter((p) => !unlinked.has(p.object_id)).sort(byFrame);
}

/**
 * The frames where a merged trajectory passes from one source track to the other (the first
 * point after each hand-over). A person merging says the object there is the one before it, which
 * answers the question a switch flag on that frame asked.
 */
export function joinFrames(
  merged: readonly TrajectoryPoint[],
  otherObjects: ReadonlySet<string>,
): Set<string> {
  const joins = new Set<string>();
  merged.forEach((p, i) => {
    const prev = merged[i - 1];
    if (prev && otherObjects.has(prev.object_id) !== otherObjects.has(p.object_id)) joins.add(p.frame_id);
  });
  return joins;
}

/** Splits flags into those kept and those cleared because they sit on one of `frames`. */
export function clearFlagsAt(
  flags: readonly StoredSwitchFlag[],
  frames: ReadonlySet<string>,
): { kept: StoredSwitchFlag[]; cleared: StoredSwitchFlag[] } {
  const cleared = flags.filter((f) => f.frame_id !== undefined && frames.has(f.frame_id));
  return { kept: flags.filter((f) => !cleared.includes(f)), cleared };
}

/** Track attrs after a merge: this track's keys (class, settings, intent) win; the other's fill only what this one lacks. */
export const mergedAttrs = (
  self: Record<string, unknown>,
  other: Record<string, unknown>,
): Record<string, unknown> => ({ ...other, ...self });

export interface SplitPlan<T> {
  before: T[];
  after: T[];
}

/** A track's things partitioned at a frame index: from `atIndex` on they go to the new track. */
export function partitionAt<T>(
  items: readonly T[],
  atIndex: number,
  indexOf: (item: T) => number,
): SplitPlan<T> {
  return {
    before: items.filter((i) => indexOf(i) < atIndex),
    after: items.filter((i) => indexOf(i) >= atIndex),
  };
}

/** Refuses a split that would leave one side without an object: that is no split but a rename. */
export function refuseEmptySide(plan: SplitPlan<EditObject>, atIndex: number): void {
  if (!plan.before.length || !plan.after.length)
    throw new RefusedError(
      `splitting at frame index ${atIndex} leaves no object ${plan.before.length ? 'from that frame on' : 'before that frame'}; nothing would be on one side`,
      { before: plan.before.length, after: plan.after.length },
    );
}

/**
 * Which side an event goes to: the side holding its start. An event spanning the cut stays whole
 * on the original track (its span is frames of the session, which it may cover without boxes), so
 * no person's event is cut into two the person never made.
 */
export const eventMoves = (startIndex: number | null, atIndex: number): boolean =>
  startIndex !== null && startIndex >= atIndex;

/** An object smoothing may move: a machine's, not a keyframe, not rejected. */
export const isSmoothable = (o: Pick<EditObject, 'source' | 'keyframe' | 'state'>): boolean =>
  isMachineSource(o.source) && !o.keyframe && o.state !== 'rejected';

export const SMOOTHING_METHOD = 'centred_moving_average';

export interface SmoothedObject {
  objectId: string;
  frameIndex: number;
  before: Box;
  after: Box;
  /** How far the box centre moved, in pixels. */
  displacement: number;
}

const centre = (b: Box) => [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2, b[2] - b[0], b[3] - b[1]] as const;

/**
 * Centred moving average of box centre and size over the track's objects in frame order, the
 * window shrinking symmetrically near the ends so it stays centred (the first and last objects keep
 * their place: an end has no neighbour on one side to average with). Every object that is not
 * rejected counts as a neighbour, a person's and a keyframe included (they are the best evidence
 * of where the object is); only the smoothable ones move. Neighbours are by order, not by time:
 * a track's objects are one per frame, and a gap is the tracker's or a person's to fill.
 */
export function smoothBoxes(objects: readonly EditObject[], window: number): SmoothedObject[] {
  if (window < 3 || window % 2 === 0)
    throw new RefusedError(`window must be an odd number of at least 3, not ${window}`);
  const seq = objects
    .filter((o) => o.state !== 'rejected')
    .sort((a, b) => a.frameIndex - b.frameIndex || a.objectId.localeCompare(b.objectId));
  const shapes = seq.map((o) => centre(o.bbox));
  const half = (window - 1) / 2;
  return seq.flatMap((o, i) => {
    if (!isSmoothable(o)) return [];
    const h = Math.min(half, i, seq.length - 1 - i);
    const around = shapes.slice(i - h, i + h + 1);
    const mean = (k: number) => around.reduce((s, c) => s + c[k]!, 0) / around.length;
    const [cx, cy, w, hgt] = [mean(0), mean(1), mean(2), mean(3)];
    const after: Box = [cx - w / 2, cy - hgt / 2, cx + w / 2, cy + hgt / 2];
    const [bx, by] = shapes[i]!;
    return [
      {
        objectId: o.objectId,
        frameIndex: o.frameIndex,
        before: o.bbox,
        after,
        displacement: Math.hypot(cx - bx, cy - by),
      },
    ];
  });
}

/** The trajectory with the boxes of the objects given replaced (smoothing keeps the trajectory the objects' boxes). */
export function withBoxes(
  trajectory: readonly TrajectoryPoint[],
  boxes: ReadonlyMap<string, Box>,
): TrajectoryPoint[] {
  return trajectory.map((p) => {
    const box = boxes.get(p.object_id);
    return box ? { ...p, box: [...box] } : p;
  });
}

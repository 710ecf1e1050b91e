import { RefusedError } from '../errors';
import type { Box } from '../geometry';
import {
  clearFlagsAt,
  eventMoves,
  joinFrames,
  mergedAttrs,
  mergeTrajectories,
  partitionAt,
  planMerge,
  refuseEmptySide,
  smoothBoxes,
  withBoxes,
  type EditObject,
  type TrajectoryPoint,
} from './edit';

const obj = (id: string, frameIndex: number, extra: Partial<EditObject> = {}): EditObject => ({
  objectId: id,
  frameId: `f${frameIndex}`,
  frameIndex,
  source: 'fused',
  state: 'review',
  keyframe: false,
  bbox: [0, 0, 10, 10],
  ...extra,
});

const point = (objectId: string, frameIndex: number): TrajectoryPoint => ({
  frame_id: `f${frameIndex}`,
  frame_index: frameIndex,
  ts_ms: frameIndex * 100,
  object_id: objectId,
  box: [0, 0, 10, 10],
  score: 1,
});

describe('planMerge', () => {
  it('moves every object of the other track when no frame holds both', () => {
    const plan = planMerge([obj('a0', 0), obj('a1', 1)], [obj('b3', 3), obj('b4', 4)], null);
    expect(plan).toEqual({ moved: ['b3', 'b4'], unlinked: [], conflicts: [] });
  });

  it('refuses a frame held by both tracks, naming it, unless told which to keep', () => {
    const self = [obj('a0', 0), obj('a2', 2)];
    const other = [obj('b2', 2), obj('b3', 3)];
    expect(() => planMerge(self, other, null)).toThrow(RefusedError);
    expect(() => planMerge(self, other, null)).toThrow(/frame indexes 2\)/);
    expect(planMerge(self, other, 'this')).toEqual({
      moved: ['b3'],
      unlinked: ['b2'],
      conflicts: [{ frame_id: 'f2', frame_index: 2, this_object_ids: ['a2'], other_object_ids: ['b2'] }],
    });
    expect(planMerge(self, other, 'other')).toMatchObject({ moved: ['b2', 'b3'], unlinked: ['a2'] });
  });

  it('merges trajectories in time order, without unlinked objects, and finds the hand-overs', () => {
    const merged = mergeTrajectories(
      [point('a0', 0), point('a1', 1), point('a5', 5)],
      [point('b2', 2), point('b3', 3), point('b1', 1)],
      new Set(['b1']),
    );
    expect(merged.map((p) => p.object_id)).toEqual(['a0', 'a1', 'b2', 'b3', 'a5']);
    expect([...joinFrames(merged, new Set(['b2', 'b3']))]).toEqual(['f2', 'f5']);
  });

  it('clears the switch flags on a join frame only, and lets this track’s attrs win', () => {
    const flags = [
      { frame: 2, frame_id: 'f2', kind: 'long_gap' },
      { frame: 4, frame_id: 'f4', kind: 'jump' },
    ];
    expect(clearFlagsAt(flags, new Set(['f2']))).toEqual({ kept: [flags[1]], cleared: [flags[0]] });
    expect(
      mergedAttrs(
        { class_name: 'car', intent: { value: 'straight' } },
        { intent: { value: 'stationary' }, note: 1 },
      ),
    ).toEqual({ class_name: 'car', intent: { value: 'straight' }, note: 1 });
  });
});

describe('split', () => {
  it('partitions at the frame index: that frame and later go to the new track', () => {
    const objects = [obj('o0', 0), obj('o2', 2), obj('o3', 3), obj('o5', 5)];
    const plan = partitionAt(objects, 3, (o) => o.frameIndex);
    expect(plan.before.map((o) => o.objectId)).toEqual(['o0', 'o2']);
    expect(plan.after.map((o) => o.objectId)).toEqual(['o3', 'o5']);
    expect(() => refuseEmptySide(plan, 3)).not.toThrow();
    expect(() =>
      refuseEmptySide(
        partitionAt(objects, 0, (o) => o.frameIndex),
        0,
      ),
    ).toThrow(/before that frame/);
    expect(() =>
      refuseEmptySide(
        partitionAt(objects, 6, (o) => o.frameIndex),
        6,
      ),
    ).toThrow(/from that frame on/);
  });

  it('moves an event only when it starts at or after the cut', () => {
    expect(eventMoves(1, 3)).toBe(false);
    expect(eventMoves(3, 3)).toBe(true);
    expect(eventMoves(null, 3)).toBe(false);
  });
});

describe('smoothBoxes', () => {
  /** A line along x (10 px a frame) with ±3 px of vertical jitter; one box wider than the rest. */
  const JITTER = [0, 3, -3, 3, -3, 3, 0];
  const line = (extra: Record<number, Partial<EditObject>> = {}) =>
    JITTER.map((dy, i) => {
      const w = i === 1 ? 16 : 10;
      const box: Box = [10 * i - w / 2, 50 + dy - 5, 10 * i + w / 2, 50 + dy + 5];
      return obj(`o${i}`, i, { bbox: box, ...extra[i] });
    });

  it('averages centres and sizes over a centred window that shrinks at the ends', () => {
    const out = smoothBoxes(line(), 3);
    expect(out.map((s) => s.objectId)).toEqual(['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6']);
    expect(out.map((s) => s.displacement)).toEqual([0, 3, 4, 4, 4, 3, 0]);
    // o1: centre (10, 50), width (10 + 16 + 10) / 3 = 12, height 10.
    expect(out[1]!.after).toEqual([4, 45, 16, 55]);
    // o2: centre y (3 − 3 + 3) / 3 + 50 = 51, width 12 as well.
    expect(out[2]!.after).toEqual([14, 46, 26, 56]);
    expect(out[0]!.after).toEqual(out[0]!.before);
  });

  it('never moves a person’s box, a keyframe or a rejected one, but averages over the first two', () => {
    const out = smoothBoxes(
      line({ 2: { source: 'human' }, 3: { keyframe: true }, 6: { state: 'rejected' } }),
      5,
    );
    expect(out.map((s) => s.objectId)).toEqual(['o0', 'o1', 'o4', 'o5']);
    // Without o6 the sequence is o0..o5: o4 averages o3..o5 (its window shrinks to 3), o5 is the end.
    expect(out.map((s) => s.displacement)).toEqual([0, 3, 4, 0]);
    expect(out[2]!.after).toEqual([35, 46, 45, 56]);
  });

  it('refuses an even or too small window', () => {
    expect(() => smoothBoxes(line(), 4)).toThrow(RefusedError);
    expect(() => smoothBoxes(line(), 1)).toThrow(RefusedError);
  });

  it('puts smoothed boxes into the trajectory', () => {
    const t = withBoxes([point('o1', 1), point('o2', 2)], new Map([['o2', [1, 2, 3, 4] as Box]]));
    expect(t.map((p) => p.box)).toEqual([
      [0, 0, 10, 10],
      [1, 2, 3, 4],
    ]);
  });
});

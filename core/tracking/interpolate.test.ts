import { RefusedError } from '../errors';
import {
  anchorRefusal,
  consecutiveSpans,
  fillAnchors,
  interpolateShape,
  isKeyframe,
  keyframeAnchors,
  planInterpolation,
  spanBetween,
  spansAround,
  type SessionFrameRef,
  type TrackObject,
} from './interpolate';

/** Frames 0..7, unevenly spaced in time as ingest leaves them after dropping near-duplicates. */
const TIMES = [0, 100, 300, 400, 1000, 1100, 1200, 1300];
const frames: SessionFrameRef[] = TIMES.map((tsMs, index) => ({ frameId: `f${index}`, index, tsMs }));

const object = (
  id: string,
  index: number,
  bbox: number[],
  extra: Partial<TrackObject> = {},
): TrackObject => ({
  objectId: id,
  frameId: `f${index}`,
  frameIndex: index,
  tsMs: TIMES[index]!,
  className: 'car',
  source: 'human',
  state: 'accepted',
  keyframe: false,
  bbox: bbox as TrackObject['bbox'],
  polyline: null,
  ...extra,
});

describe('interpolateShape', () => {
  it('moves box corners linearly', () => {
    const a = object('a', 0, [0, 0, 10, 10]);
    const b = object('b', 4, [100, 50, 120, 70]);
    expect(interpolateShape(a, b, 0.25)).toEqual({ bbox: [25, 12.5, 37.5, 25], polyline: null });
  });

  it('moves polylines vertex by vertex and encloses them in the box', () => {
    const a = object('a', 0, [0, 0, 10, 10], { polyline: [[0, 0, 10, 0, 10, 10]] });
    const b = object('b', 4, [20, 0, 30, 10], { polyline: [[20, 0, 40, 0, 30, 10]] });
    const mid = interpolateShape(a, b, 0.5);
    expect(mid.polyline).toEqual([[10, 0, 25, 0, 20, 10]]);
    expect(mid.bbox).toEqual([10, 0, 25, 10]);
  });

  it('refuses polygons whose vertex counts do not match, naming both objects', () => {
    const a = object('a', 0, [0, 0, 10, 10], { polyline: [[0, 0, 10, 0, 10, 10]] });
    const b = object('b', 4, [0, 0, 10, 10], { polyline: [[0, 0, 10, 0, 10, 10, 0, 10]] });
    expect(() => interpolateShape(a, b, 0.5)).toThrow(RefusedError);
    expect(() => interpolateShape(a, b, 0.5)).toThrow(/a and b .*unmatched vertex counts \(\[3\] vs \[4\]\)/);
    expect(() => interpolateShape(a, object('c', 4, [0, 0, 1, 1]), 0.5)).toThrow(/\[3\] vs none/);
  });
});

describe('planInterpolation', () => {
  it('places each frame by its timestamp, not its index', () => {
    const a = object('a', 0, [0, 0, 10, 10]);
    const b = object('b', 4, [100, 0, 110, 10]);
    const plans = planInterpolation(frames, [a, b], [spanBetween(b, a)]);
    expect(plans.map((p) => p.action)).toEqual(['create', 'create', 'create']);
    // Frame 2 is 300 ms of 1000 in, though two of four frames along.
    expect(plans[1]).toMatchObject({
      frameId: 'f2',
      t: 0.3,
      shape: { bbox: [30, 0, 40, 10] },
      className: 'car',
    });
  });

  it('falls back to frame index when the anchors share a timestamp', () => {
    const a = object('a', 0, [0, 0, 10, 10], { tsMs: 5 });
    const b = object('b', 2, [20, 0, 30, 10], { tsMs: 5 });
    expect(planInterpolation(frames, [a, b], [spanBetween(a, b)])[0]).toMatchObject({ t: 0.5 });
  });

  it('leaves a person’s object and a keyframe alone, and recomputes its own fill', () => {
    const a = object('a', 0, [0, 0, 10, 10]);
    const b = object('b', 4, [100, 0, 110, 10]);
    const human = object('h', 1, [1, 1, 2, 2]);
    const fill = object('i', 2, [0, 0, 1, 1], { source: 'interp' });
    const pinned = object('k', 3, [5, 5, 6, 6], { source: 'interpolated', keyframe: true });
    const objects = [a, b, human, fill, pinned];
    const plans = planInterpolation(frames, objects, [spanBetween(a, b)]);
    expect(plans.map((p) => [p.frameId, p.action, 'objectId' in p ? p.objectId : null])).toEqual([
      ['f1', 'left', 'h'],
      ['f2', 'update', 'i'],
      ['f3', 'left', 'k'],
    ]);
    expect(plans[0]).toMatchObject({ reason: 'not_interpolated' });
    expect(plans[2]).toMatchObject({ reason: 'keyframe' });
  });

  it('refuses anchors of different classes before planning anything', () => {
    const a = object('a', 0, [0, 0, 10, 10]);
    const b = object('b', 4, [0, 0, 10, 10], { className: 'truck' });
    expect(() => planInterpolation(frames, [a, b], [spanBetween(a, b)])).toThrow(
      /a \(car\) and b \(truck\) are of different classes/,
    );
  });

  it('refuses two anchors on one frame', () => {
    expect(() => spanBetween(object('a', 2, [0, 0, 1, 1]), object('b', 2, [0, 0, 1, 1]))).toThrow(
      RefusedError,
    );
  });
});

describe('spans', () => {
  const k0 = object('k0', 0, [0, 0, 10, 10], { keyframe: true });
  const h2 = object('h2', 2, [0, 0, 10, 10]);
  const i3 = object('i3', 3, [0, 0, 10, 10], { source: 'interpolated' });
  const k5 = object('k5', 5, [50, 0, 60, 10], { keyframe: true });
  const k7 = object('k7', 7, [70, 0, 80, 10], { keyframe: true });
  const all = [k0, h2, i3, k5, k7];
  const ids = (spans: ReturnType<typeof consecutiveSpans>) =>
    spans.map((s) => [s.from.objectId, s.to.objectId]);

  it('fills the gaps between every object interpolation did not make', () => {
    expect(ids(consecutiveSpans(fillAnchors(all)))).toEqual([
      ['k0', 'h2'],
      ['h2', 'k5'],
      ['k5', 'k7'],
    ]);
  });

  it('spans consecutive keyframes only, leaving the human object between them', () => {
    const spans = consecutiveSpans(keyframeAnchors(all));
    expect(ids(spans)).toEqual([
      ['k0', 'k5'],
      ['k5', 'k7'],
    ]);
    const plans = planInterpolation(frames, all, spans);
    expect(plans.map((p) => `${p.frameId}:${p.action}`)).toEqual([
      'f1:create',
      'f2:left',
      'f3:update',
      'f4:create',
      'f6:create',
    ]);
  });

  it('finds the spans on both sides of one keyframe, or one at an end', () => {
    expect(ids(spansAround(k5, all))).toEqual([
      ['k0', 'k5'],
      ['k5', 'k7'],
    ]);
    expect(ids(spansAround(k7, all))).toEqual([['k5', 'k7']]);
    expect(spansAround(k7, [k7])).toEqual([]);
  });

  it('anchors nothing on a rejected object, which still keeps its frame', () => {
    const rejected = object('r', 2, [0, 0, 1, 1], { state: 'rejected' });
    const objects = [k0, rejected, k5];
    expect(ids(consecutiveSpans(fillAnchors(objects)))).toEqual([['k0', 'k5']]);
    expect(anchorRefusal(rejected)).toMatch(/rejected/);
    expect(anchorRefusal(i3)).toMatch(/interpolated/);
    expect(anchorRefusal(h2)).toBeNull();
    const plans = planInterpolation(frames, objects, consecutiveSpans(fillAnchors(objects)));
    expect(plans.find((p) => p.frameId === 'f2')).toMatchObject({
      action: 'left',
      objectId: 'r',
      reason: 'rejected',
    });
    const rejectedFill = object('rf', 3, [0, 0, 1, 1], { source: 'interpolated', state: 'rejected' });
    expect(planInterpolation(frames, [k0, rejectedFill, k5], [spanBetween(k0, k5)])[2]).toMatchObject({
      frameId: 'f3',
      action: 'left',
      reason: 'rejected',
    });
  });

  it('reads only a boolean true as a keyframe', () => {
    expect(isKeyframe({ keyframe: true })).toBe(true);
    expect(isKeyframe({ keyframe: 'yes' })).toBe(false);
    expect(isKeyframe(null)).toBe(false);
  });
});

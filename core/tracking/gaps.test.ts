import { findTrackGaps } from './gaps';
import type { SessionFrameRef, TrackObject } from './interpolate';

const frames: SessionFrameRef[] = Array.from({ length: 12 }, (_, i) => ({
  frameId: `f${i}`,
  index: i,
  tsMs: i * 333,
}));

const obj = (i: number, over: Partial<TrackObject> = {}): TrackObject => ({
  objectId: `o${i}`,
  frameId: `f${i}`,
  frameIndex: i,
  tsMs: i * 333,
  className: 'car',
  source: 'fused',
  state: 'review',
  keyframe: false,
  bbox: [10 * i, 0, 10 * i + 20, 20],
  polyline: null,
  ...over,
});

describe('findTrackGaps', () => {
  it('finds the frames without an object of the track between consecutive anchors', () => {
    const gaps = findTrackGaps(frames, [obj(0), obj(3), obj(4), obj(6)], 5);
    expect(
      gaps.map((g) => [g.span.from.objectId, g.span.to.objectId, g.missing.map((f) => f.index), g.action]),
    ).toEqual([
      ['o0', 'o3', [1, 2], 'fill'],
      ['o4', 'o6', [5], 'fill'],
    ]);
  });

  it('does not count a frame holding a fill or a rejected box as missing', () => {
    const gaps = findTrackGaps(
      frames,
      [obj(0), obj(1, { source: 'interpolated' }), obj(2, { state: 'rejected' }), obj(4)],
      5,
    );
    // The fill and the rejected box anchor nothing, so the gap runs from o0 to o4; only frame 3 is empty.
    expect(gaps).toHaveLength(1);
    expect(gaps[0]!.missing.map((f) => f.index)).toEqual([3]);
  });

  it('skips a gap longer than max_gap, across classes, or between unmatched polygons', () => {
    const long = findTrackGaps(frames, [obj(0), obj(7)], 5);
    expect(long.map((g) => [g.action, g.reason, g.missing.length])).toEqual([['skip', 'too_long', 6]]);
    expect(findTrackGaps(frames, [obj(0), obj(7)], 6)[0]!.action).toBe('fill');
    const classes = findTrackGaps(frames, [obj(0), obj(2, { className: 'van' })], 5);
    expect([classes[0]!.action, classes[0]!.reason]).toEqual(['skip', 'class_mismatch']);
    const polygons = findTrackGaps(
      frames,
      [obj(0, { polyline: [[0, 0, 1, 0, 1, 1]] }), obj(2, { polyline: [[0, 0, 1, 0, 1, 1, 0, 1]] })],
      5,
    );
    expect([polygons[0]!.action, polygons[0]!.reason]).toEqual(['skip', 'unmatched_polygons']);
  });

  it('has no gap on a track without holes or with one anchor', () => {
    expect(findTrackGaps(frames, [obj(0), obj(1), obj(2)], 5)).toEqual([]);
    expect(findTrackGaps(frames, [obj(4)], 5)).toEqual([]);
  });
});

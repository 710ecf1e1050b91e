import type { Box } from '../geometry/boxes';
import { DEFAULT_KEYFRAME_THRESHOLDS, KeyframeThresholds, suggestKeyframes } from './keyframes';
import type { TrackletPoint } from './points';

/** Boxes 30×40 scaled by `s` (diagonal 50·s px) centred on each point, one frame apart at 3 fps. */
const track = (centres: Array<[number, number, number?]>): TrackletPoint[] =>
  centres.map(([x, y, s = 1], i) => ({
    frame_id: `f${i}`,
    frame_index: i,
    ts_ms: (i * 1000) / 3,
    object_id: `o${i}`,
    box: [x - 15 * s, y - 20 * s, x + 15 * s, y + 20 * s] as Box,
  }));
const line = (n: number, from: [number, number], step: [number, number]) =>
  Array.from({ length: n }, (_, i) => [from[0] + step[0] * i, from[1] + step[1] * i] as [number, number]);
const framesOf = (points: TrackletPoint[], t = DEFAULT_KEYFRAME_THRESHOLDS) =>
  suggestKeyframes(points, t).keyframes.map((k) => [k.frame_index, k.reasons]);

describe('keyframe suggestion', () => {
  it('keeps only the ends of a track moving at constant speed, and of one jittering within the tolerance', () => {
    expect(framesOf(track(line(9, [100, 200], [20, 0])))).toEqual([
      [0, ['first']],
      [8, ['last']],
    ]);
    // ±4 px around a straight path: under 0.2 × 50 px.
    const jitter = line(9, [100, 200], [20, 0]).map(
      ([x, y], i) => [x, y + (i % 2 ? 4 : -4)] as [number, number],
    );
    expect(framesOf(track(jitter))).toEqual([
      [0, ['first']],
      [8, ['last']],
    ]);
  });

  it('marks where an object stops on its line: the deviation is synchronised in time, not the distance to the path', () => {
    const stop = [...line(5, [100, 200], [20, 0]), ...line(4, [180, 200], [0, 0])];
    expect(framesOf(track(stop))).toEqual([
      [0, ['first']],
      [4, ['motion']],
      [8, ['last']],
    ]);
    // Interpolation between frames 0 and 8 would put frame 4 at x = 140, 40 px off: 0.8 diagonals.
    expect(framesOf(track(stop), KeyframeThresholds.parse({ tolerance: 0.9 }))).toEqual([
      [0, ['first']],
      [8, ['last']],
    ]);
  });

  it('marks the corner of a turn for its motion and its change of direction', () => {
    const turn = [...line(5, [300, 400], [0, -20]), ...line(4, [320, 320], [20, 0])];
    expect(framesOf(track(turn))).toEqual([
      [0, ['first']],
      [4, ['motion', 'direction']],
      [8, ['last']],
    ]);
    // The corner stays a direction keyframe however loose the position tolerance is.
    expect(framesOf(track(turn), KeyframeThresholds.parse({ tolerance: 10 }))).toEqual([
      [0, ['first']],
      [4, ['direction']],
      [8, ['last']],
    ]);
    // A turn below the threshold is none.
    expect(framesOf(track(turn), KeyframeThresholds.parse({ tolerance: 10, turn_deg: 100 }))).toEqual([
      [0, ['first']],
      [8, ['last']],
    ]);
  });

  it('marks where the box stops growing, by the size tolerance', () => {
    const grow = [1, 1.25, 1.5, 1.75, 2, 2, 2, 2, 2].map((s) => [300, 300, s] as [number, number, number]);
    expect(framesOf(track(grow))).toEqual([
      [0, ['first']],
      [4, ['size']],
      [8, ['last']],
    ]);
    // Interpolated diagonal 75 px against 100 px: 33 %, under a 40 % tolerance.
    expect(framesOf(track(grow), KeyframeThresholds.parse({ size_tolerance: 0.4 }))).toEqual([
      [0, ['first']],
      [8, ['last']],
    ]);
  });

  it('reads the points in frame order and answers the ends of tiny tracks', () => {
    const stop = track([...line(5, [100, 200], [20, 0]), ...line(4, [180, 200], [0, 0])]);
    expect(suggestKeyframes([...stop].reverse()).keyframes.map((k) => k.object_id)).toEqual([
      'o0',
      'o4',
      'o8',
    ]);
    expect(suggestKeyframes(track([[5, 5]])).keyframes).toEqual([
      { frame_id: 'f0', frame_index: 0, object_id: 'o0', reasons: ['first', 'last'] },
    ]);
    expect(suggestKeyframes([])).toEqual({ keyframes: [], scale_px: 0 });
    expect(suggestKeyframes(stop).scale_px).toBe(50);
  });

  it('refuses thresholds out of range', () => {
    expect(KeyframeThresholds.safeParse({ tolerance: 0 }).success).toBe(false);
    expect(KeyframeThresholds.safeParse({ turn_deg: 200 }).success).toBe(false);
    expect(KeyframeThresholds.parse({ tolerance: '0.5' }).tolerance).toBe(0.5);
  });
});

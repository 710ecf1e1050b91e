import { InputError } from '../errors';
import { normaliseDegrees, normaliseShape } from './object-shape';
import { clampPolylines, clipBox, clipMask, clipRingToFrame, enclosingBox, rotatedCorners } from './shapes';

const frame = { width: 100, height: 50 };

describe('boxes', () => {
  it('keeps a box inside the frame and clips one that crosses it', () => {
    expect(clipBox([10, 10, 20, 20], frame)).toEqual({ box: [10, 10, 20, 20], clipped: false });
    expect(clipBox([-5, 40, 120, 60], frame)).toEqual({ box: [0, 40, 100, 50], clipped: true });
  });
  it('refuses inverted, non-finite, wrongly sized and outside boxes, naming the field', () => {
    expect(() => clipBox([20, 10, 10, 20], frame)).toThrow(/x2 > x1/);
    expect(() => clipBox([0, 0, Infinity, 1], frame)).toThrow(/finite/);
    expect(() => clipBox([0, 0, 1], frame)).toThrow(InputError);
    expect(() => clipBox([200, 0, 300, 10], frame)).toThrow(/outside/);
    try {
      clipBox([0, 0, NaN, 1], frame);
    } catch (e) {
      expect((e as InputError).fieldErrors[0]!.field).toBe('body.bbox.2');
    }
  });
  it('rotates about the centre, clockwise in image axes', () => {
    const c = rotatedCorners([0, 0, 10, 10], 90).map((v) => Math.round(v * 1e9) / 1e9 + 0);
    expect(c).toEqual([10, 0, 10, 10, 0, 10, 0, 0]);
    expect(enclosingBox(rotatedCorners([40, 20, 60, 30], 45)).map((v) => Math.round(v * 100) / 100)).toEqual([
      39.39, 14.39, 60.61, 35.61,
    ]);
  });
  it('normalises degrees into (-180, 180]', () => {
    expect(normaliseDegrees(270)).toBe(-90);
    expect(normaliseDegrees(-180)).toBe(180);
    expect(normaliseDegrees(540)).toBe(180);
    expect(() => normaliseDegrees(NaN)).toThrow(InputError);
  });
});

describe('masks and polylines', () => {
  it('clips a ring crossing the frame edge (Sutherland–Hodgman)', () => {
    expect(clipRingToFrame([90, 10, 110, 10, 110, 20, 90, 20], frame)).toEqual([
      90, 10, 100, 10, 100, 20, 90, 20,
    ]);
    expect(clipRingToFrame([200, 10, 210, 10, 210, 20], frame)).toEqual([]);
  });
  it('refuses rings under three points or with odd length, drops rings left outside', () => {
    expect(() => clipMask([[1, 1, 2, 2]], frame)).toThrow(/at least 3 points/);
    expect(() => clipMask([[1, 1, 2, 2, 3]], frame)).toThrow(/even count/);
    expect(() => clipMask([[200, 10, 210, 10, 210, 20]], frame)).toThrow(/no ring/);
    expect(() => clipMask([[1, 1, 2, 2, 3, 3]], frame)).toThrow(/no ring/); // collinear: no area
    const r = clipMask(
      [
        [1, 1, 5, 1, 5, 5],
        [200, 10, 210, 10, 210, 20],
      ],
      frame,
    );
    expect(r).toEqual({ rings: [[1, 1, 5, 1, 5, 5]], clipped: true });
  });
  it('clamps polyline vertices', () => {
    expect(clampPolylines([[-10, 5, 50, 60]], frame)).toEqual({ lines: [[0, 5, 50, 50]], clipped: true });
    expect(() => clampPolylines([[1, 1]], frame)).toThrow(/at least 2 points/);
  });
});

describe('object shapes', () => {
  it('grows the bbox to enclose mask, polylines and keypoints', () => {
    const s = normaliseShape(
      {
        bbox: [10, 10, 20, 20],
        rot_deg: 0,
        mask_polygons: [[5, 5, 30, 5, 30, 15]],
        polyline: [[0, 40, 8, 45]],
        keypoints: { head: [25, 2] },
      },
      frame,
    );
    expect(s.bbox).toEqual([0, 2, 30, 45]);
    expect(s.rbox).toBeNull();
    expect(s.clipped).toBe(false);
  });
  it('keeps a rotated box as rbox and stores its clipped enclosure as bbox', () => {
    const s = normaliseShape({ bbox: [80, 20, 120, 30], rot_deg: 90, mask_polygons: null }, frame);
    expect(s.rbox).toEqual([80, 20, 120, 30]);
    expect(s.bbox.map((v) => Math.round(v))).toEqual([95, 5, 100, 45]);
    expect(s.clipped).toBe(true);
    expect(s.rotDeg).toBe(90);
  });
  it('refuses keypoints outside the frame', () => {
    expect(() =>
      normaliseShape({ bbox: [1, 1, 2, 2], rot_deg: 0, keypoints: { toe: [5, 60] } }, frame),
    ).toThrow(/keypoints.toe/);
  });
});

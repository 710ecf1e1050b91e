import { describe, expect, it } from '@jest/globals';
import {
  boxCorners,
  drag,
  foldDegrees,
  handleAt,
  insertVertex,
  kindOf,
  pickAt,
  removeVertex,
  rotateBy,
  type Shape,
} from './shapes';

const box = (b: [number, number, number, number], rot = 0): Shape => ({
  bbox: b,
  rbox: rot ? b : null,
  rot_deg: rot,
  mask: null,
  polyline: null,
  keypoints: null,
});
const close = (actual: number[], expected: number[]) =>
  actual.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 6));

describe('an object shape in the editor', () => {
  it('is edited as its richest kind', () => {
    expect(kindOf(box([0, 0, 1, 1]))).toBe('box');
    expect(kindOf({ mask: [[0, 0, 1, 0, 1, 1]], polyline: [[0, 0, 1, 1]], keypoints: null })).toBe('polygon');
    expect(kindOf({ mask: null, polyline: [[0, 0, 1, 1]], keypoints: { a: [1, 1] } })).toBe('polyline');
    expect(kindOf({ mask: [], polyline: null, keypoints: { a: [1, 1] } })).toBe('keypoints');
  });

  it('resizes a box from a corner with the opposite corner fixed', () => {
    const s = drag(box([10, 10, 30, 20]), { kind: 'corner', index: 2 }, [30, 20], [50, 40]);
    expect(s.bbox).toEqual([10, 10, 50, 40]);
    expect(s.rot_deg).toBe(0);
  });

  it('resizes a rotated box in its own axes: the fixed corner stays where it was', () => {
    const s0 = box([0, 0, 20, 10], 90);
    const fixed = boxCorners(s0)[0]!;
    const dragged = boxCorners(s0)[2]!;
    const s = drag(s0, { kind: 'corner', index: 2 }, dragged, [dragged[0] - 5, dragged[1] + 10]);
    expect(s.rot_deg).toBe(90);
    close(boxCorners(s)[0]!, fixed);
    // 10 more along the box's own width (image y after a quarter turn), 5 more along its height.
    const [x1, y1, x2, y2] = s.rbox!;
    expect(x2 - x1).toBeCloseTo(30, 6);
    expect(y2 - y1).toBeCloseTo(15, 6);
  });

  it('turns a box with the rotation handle about its centre, and bbox encloses the turned box', () => {
    const s = drag(box([0, 0, 20, 10]), { kind: 'rotate' }, [10, -10], [30, 5]);
    expect(s.rot_deg).toBe(90);
    expect(s.rbox).toEqual([0, 0, 20, 10]);
    close(s.bbox, [5, -5, 15, 15]);
    expect(rotateBy(s, 95).rot_deg).toBe(-175);
    expect(rotateBy(s, -90).rbox).toBeNull();
  });

  it('folds degrees into (−180, 180]', () => {
    expect(foldDegrees(180)).toBe(180);
    expect(foldDegrees(-180)).toBe(180);
    expect(foldDegrees(270)).toBe(-90);
    expect(foldDegrees(-370)).toBe(-10);
  });

  it('finds a polygon vertex before its edge, and an edge before the body', () => {
    const s: Shape = { ...box([0, 0, 100, 100]), mask: [[0, 0, 100, 0, 100, 100, 0, 100]] };
    expect(handleAt(s, [99, 1], 3)).toEqual({ kind: 'vertex', part: 'mask', ring: 0, index: 1 });
    expect(handleAt(s, [50, 1], 3)).toEqual({ kind: 'edge', part: 'mask', ring: 0, index: 0, at: [50, 0] });
    expect(handleAt(s, [50, 50], 3)).toEqual({ kind: 'body' });
    expect(handleAt(s, [150, 50], 3)).toBeNull();
  });

  it('moves, adds and removes polygon vertices, keeping bbox around the ring', () => {
    const s: Shape = { ...box([0, 0, 10, 10]), mask: [[0, 0, 10, 0, 10, 10]] };
    const moved = drag(s, { kind: 'vertex', part: 'mask', ring: 0, index: 2 }, [10, 10], [20, 30]);
    expect(moved.mask).toEqual([[0, 0, 10, 0, 20, 30]]);
    expect(moved.bbox).toEqual([0, 0, 20, 30]);
    const added = insertVertex(s, 'mask', 0, 0, [5, -5]);
    expect(added.mask).toEqual([[0, 0, 5, -5, 10, 0, 10, 10]]);
    expect(added.bbox).toEqual([0, -5, 10, 10]);
    expect(removeVertex(added, 'mask', 0, 1)!.mask).toEqual([[0, 0, 10, 0, 10, 10]]);
    // A polygon keeps three points, a polyline two.
    expect(removeVertex(s, 'mask', 0, 0)).toBeNull();
    const line: Shape = { ...box([0, 0, 10, 10]), polyline: [[0, 0, 5, 5, 10, 10]] };
    expect(removeVertex(line, 'polyline', 0, 1)!.polyline).toEqual([[0, 0, 10, 10]]);
    expect(removeVertex(removeVertex(line, 'polyline', 0, 1)!, 'polyline', 0, 0)).toBeNull();
  });

  it('moves one keypoint and keeps its visibility', () => {
    const s: Shape = { ...box([0, 0, 20, 20]), keypoints: { nose: [10, 10, 2], tail: [12, 12] } };
    expect(handleAt(s, [10.5, 10.5], 2)).toEqual({ kind: 'keypoint', name: 'nose' });
    const t = drag(s, { kind: 'keypoint', name: 'nose' }, [10, 10], [30, 40]);
    expect(t.keypoints).toEqual({ nose: [30, 40, 2], tail: [12, 12] });
    expect(t.bbox).toEqual([8, 8, 34, 44]);
  });

  it('moves every part of a shape with its body', () => {
    const s: Shape = {
      bbox: [0, 0, 10, 10],
      rbox: [0, 0, 10, 10],
      rot_deg: 30,
      mask: [[0, 0, 10, 0, 10, 10]],
      polyline: [[1, 1, 2, 2]],
      keypoints: { a: [5, 5, 1] },
    };
    const t = drag(s, { kind: 'body' }, [0, 0], [3, -2]);
    expect(t).toEqual({
      bbox: [3, -2, 13, 8],
      rbox: [3, -2, 13, 8],
      rot_deg: 30,
      mask: [[3, -2, 13, -2, 13, 8]],
      polyline: [[4, -1, 5, 0]],
      keypoints: { a: [8, 3, 1] },
    });
  });

  it('picks the smallest object under the pointer, so one inside another stays reachable', () => {
    const big = { id: 'big', ...box([0, 0, 100, 100]) };
    const small = { id: 'small', ...box([40, 40, 60, 60]) };
    expect(pickAt([big, small], [50, 50], 2)?.id).toBe('small');
    expect(pickAt([big, small], [10, 10], 2)?.id).toBe('big');
    expect(pickAt([big, small], [200, 200], 2)).toBeNull();
    const line = { id: 'line', ...box([0, 0, 100, 100]), polyline: [[0, 0, 100, 100]] };
    expect(pickAt([line], [50, 51], 2)?.id).toBe('line');
    expect(pickAt([line], [80, 20], 2)).toBeNull();
  });
});

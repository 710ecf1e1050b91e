import { describe, expect, it } from '@jest/globals';
import { outline } from './painter';

describe('an object outline', () => {
  it('is the box itself when axis-aligned', () => {
    expect(outline({ bbox: [10, 20, 30, 60], rbox: null, rot_deg: 0 })).toEqual([
      [10, 20],
      [30, 20],
      [30, 60],
      [10, 60],
    ]);
  });

  it('turns the rotated box clockwise (in image coordinates) about its centre', () => {
    const corners = outline({ bbox: [0, 0, 0, 0], rbox: [0, 0, 20, 10], rot_deg: 90 });
    const expected = [
      [15, -5],
      [15, 15],
      [5, 15],
      [5, -5],
    ];
    corners.forEach(([x, y], i) => {
      expect(x).toBeCloseTo(expected[i]![0]!, 9);
      expect(y).toBeCloseTo(expected[i]![1]!, 9);
    });
  });
});

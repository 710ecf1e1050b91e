import { expandBox, intersectionArea, iou, nms, overlapOfSmaller, scaleBox, type ScoredBox } from './boxes';

describe('detector boxes', () => {
  it('computes IoU and suppresses overlapping lower-scored boxes', () => {
    const a: ScoredBox = { box: [0, 0, 10, 10], score: 0.9 };
    const b: ScoredBox = { box: [5, 0, 15, 10], score: 0.8 };
    const c: ScoredBox = { box: [1, 1, 11, 11], score: 0.7 };
    expect(iou(a.box, b.box)).toBeCloseTo(50 / 150);
    expect(iou(a.box, [20, 20, 30, 30])).toBe(0);
    expect(nms([c, b, a], 0.5)).toEqual([a, b]);
  });
  it('grows a box within the image and scales it per axis', () => {
    expect(expandBox([0, 0, 10, 10], 0.5, 12, 100)).toEqual([0, 0, 12, 15]);
    expect(scaleBox([10, 20, 30, 40], 2, 0.5)).toEqual([20, 10, 60, 20]);
  });
});

test('overlap of the smaller box is 1 for a box inside another and 0 for disjoint or empty boxes', () => {
  expect(overlapOfSmaller([0, 0, 100, 100], [10, 10, 20, 20])).toBe(1);
  expect(overlapOfSmaller([0, 0, 10, 10], [5, 0, 25, 10])).toBe(0.5);
  expect(overlapOfSmaller([0, 0, 10, 10], [20, 20, 30, 30])).toBe(0);
  expect(overlapOfSmaller([0, 0, 10, 10], [5, 5, 5, 5])).toBe(0);
  expect(intersectionArea([0, 0, 10, 10], [5, 5, 15, 15])).toBe(25);
});

import { detectionMetrics, type EvalImage } from './metrics';

const images: EvalImage[] = [
  { id: 'a', width: 100, height: 100, boxes: [{ bbox: [10, 10, 50, 50], classIndex: 1 }] },
  {
    id: 'b',
    width: 100,
    height: 100,
    boxes: [
      { bbox: [20, 20, 60, 60], classIndex: 1 },
      { bbox: [0, 0, 90, 40], classIndex: 5 },
    ],
  },
];

describe('validation AP@0.5', () => {
  it('is 1 per class for exact detections and 0 for none, over the split’s classes only', () => {
    const exact = detectionMetrics(images, [
      [{ box: [10, 10, 50, 50], score: 0.9, classIndex: 1 }],
      [
        { box: [20, 20, 60, 60], score: 0.8, classIndex: 1 },
        { box: [0, 0, 90, 40], score: 0.7, classIndex: 5 },
        // A class without ground truth in the split is no part of the figures.
        { box: [0, 0, 90, 40], score: 0.99, classIndex: 3 },
      ],
    ]);
    // COCO averages 101 recall points: "1" is 1 within float rounding.
    expect(Object.keys(exact.ap50ByClass)).toEqual(['1', '5']);
    for (const v of [exact.map50, ...Object.values(exact.ap50ByClass)]) expect(v).toBeCloseTo(1, 9);
    expect(detectionMetrics(images, [[], []])).toEqual({ map50: 0, ap50ByClass: { '1': 0, '5': 0 } });
  });

  it('counts a confident wrong class as a miss of the right one', () => {
    const confused = detectionMetrics(images, [
      [{ box: [10, 10, 50, 50], score: 0.9, classIndex: 3 }],
      [
        { box: [20, 20, 60, 60], score: 0.8, classIndex: 1 },
        { box: [0, 0, 90, 40], score: 0.7, classIndex: 5 },
      ],
    ]);
    expect(confused.ap50ByClass['5']).toBeCloseTo(1, 9);
    expect(confused.ap50ByClass['1']).toBeCloseTo(0.5, 2);
    expect(confused.map50).toBeCloseTo(0.75, 2);
  });
});

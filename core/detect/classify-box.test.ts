import type { Box } from '../geometry';
import { rankBoxClasses } from './classify-box';

const box: Box = [100, 100, 200, 200];

describe('rankBoxClasses', () => {
  it('ranks the classes of detections that match the box by their best score', () => {
    const ranked = rankBoxClasses(
      box,
      [
        { box: [102, 98, 198, 205], className: 'car', score: 0.8 },
        { box: [110, 110, 190, 190], className: 'truck', score: 0.6 },
        { box: [101, 101, 199, 199], className: 'car', score: 0.9 },
        // far away: does not vote
        { box: [400, 400, 500, 500], className: 'person', score: 0.99 },
      ],
      0.5,
    );
    expect(ranked.map((c) => c.className)).toEqual(['car', 'truck']);
    expect(ranked[0]!.score).toBe(0.9);
    expect(ranked[0]!.iou).toBeGreaterThan(0.9);
  });

  it('returns no candidates when nothing overlaps enough', () => {
    expect(rankBoxClasses(box, [{ box: [150, 150, 300, 300], className: 'car', score: 0.9 }], 0.5)).toEqual(
      [],
    );
  });
});

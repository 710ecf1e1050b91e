import { rankBoxClasses } from './classify-box';

const box = { x1: 100, y1: 100, x2: 200, y2: 200 };

describe('rankBoxClasses', () => {
  it('ranks the classes of detections that match the box by their best score', () => {
    const ranked = rankBoxClasses(
      box,
      [
        { box: { x1: 102, y1: 98, x2: 198, y2: 205 }, className: 'car', score: 0.8 },
        { box: { x1: 110, y1: 110, x2: 190, y2: 190 }, className: 'truck', score: 0.6 },
        { box: { x1: 101, y1: 101, x2: 199, y2: 199 }, className: 'car', score: 0.9 },
        // far away: does not vote
        { box: { x1: 400, y1: 400, x2: 500, y2: 500 }, className: 'person', score: 0.99 },
      ],
      0.5,
    );
    expect(ranked.map((c) => c.className)).toEqual(['car', 'truck']);
    expect(ranked[0]!.score).toBe(0.9);
    expect(ranked[0]!.iou).toBeGreaterThan(0.9);
  });

  it('returns no candidates when nothing overlaps enough', () => {
    expect(
      rankBoxClasses(
        box,
        [{ box: { x1: 150, y1: 150, x2: 300, y2: 300 }, className: 'car', score: 0.9 }],
        0.5,
      ),
    ).toEqual([]);
  });
});

import { missedDetections, temporalSupport, type RecallDetection } from './missed';

const d = (box: [number, number, number, number], score: number): RecallDetection => ({
  box,
  className: 'car',
  score,
});

describe('missedDetections', () => {
  it('keeps only detections no existing object covers, best first', () => {
    const existing: Array<[number, number, number, number]> = [[0, 0, 100, 100]];
    const got = missedDetections(
      [d([0, 0, 100, 100], 0.9), d([200, 0, 260, 60], 0.2), d([300, 0, 360, 60], 0.4)],
      existing,
      0.5,
    );
    expect(got.map((x) => x.score)).toEqual([0.4, 0.2]);
  });

  it('counts an overlap at exactly the match IoU as covered, and one just under as missed', () => {
    // [0,0,100,100] vs [0,0,100,50]: IoU 0.5.
    expect(missedDetections([d([0, 0, 100, 50], 0.5)], [[0, 0, 100, 100]], 0.5)).toEqual([]);
    expect(missedDetections([d([0, 0, 100, 49], 0.5)], [[0, 0, 100, 100]], 0.5)).toHaveLength(1);
  });

  it('treats every detection as missed on a frame without objects', () => {
    expect(missedDetections([d([1, 1, 5, 5], 0.3)], [], 0.5)).toHaveLength(1);
  });
});

describe('temporalSupport', () => {
  const at = (frameIndex: number, box: [number, number, number, number], className = 'car') => ({
    frameIndex,
    box,
    className,
  });

  it('counts the neighbouring frames within the window with an overlapping object of the same class', () => {
    const c = at(10, [0, 0, 100, 100]);
    const n = [
      at(9, [5, 5, 105, 105]),
      at(11, [0, 0, 100, 100]),
      at(11, [2, 2, 98, 98]), // the same frame twice counts once
      at(13, [0, 0, 100, 100]), // outside the window
      at(12, [0, 0, 100, 100], 'bus'), // another class
      at(12, [500, 500, 600, 600]), // elsewhere
      at(10, [0, 0, 100, 100]), // its own frame
    ];
    expect(temporalSupport(c, n, 2, 0.3)).toBe(2);
  });
});

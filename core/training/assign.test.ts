import type { Box } from '../geometry';
import { decodeYolox, letterbox } from '../detect/yolox';
import { anchorBox, anchorGrid, assignAnchors, centreCandidates, DEFAULT_ASSIGN } from './assign';

const grid = anchorGrid(416, [8, 16, 32]);

describe('the anchor grid', () => {
  it('lays out YOLOX’s 3549 anchor points finest grid first, centred in their cells', () => {
    expect(grid.count).toBe(3549);
    expect(grid.levelStart).toEqual([0, 2704, 3380]);
    expect([grid.centreX[0], grid.centreY[0], grid.level[0]]).toEqual([4, 4, 0]);
    expect([grid.centreX[53], grid.centreY[53]]).toEqual([12, 12]); // row 1, column 1 of the 52×52 grid
    expect([grid.centreX[2704], grid.centreY[2704], grid.level[2704]]).toEqual([8, 8, 1]);
    expect([grid.centreX[3548], grid.centreY[3548], grid.level[3548]]).toEqual([400, 400, 2]);
    expect(() => anchorGrid(100, [8])).toThrow('not a multiple');
  });
});

describe('centre sampling', () => {
  it('takes anchors inside the box and within 2.5 strides of its centre, at every level', () => {
    const picked = centreCandidates(grid, [100, 100, 200, 200], 2.5);
    const perLevel = [0, 1, 2].map((l) => picked.filter((a) => grid.level[a] === l).length);
    // stride 8: centres 132…164 (|x − 150| < 20); 16: 120…184 (< 40); 32: 112…176 (< 80, inside the box).
    expect(perLevel).toEqual([25, 25, 9]);
    for (const a of picked) {
      const r = 2.5 * grid.strides[grid.level[a]!]!;
      expect(Math.abs(grid.centreX[a]! - 150)).toBeLessThan(r);
      expect(grid.centreX[a]! > 100 && grid.centreX[a]! < 200).toBe(true);
    }
  });

  it('gives a box too small for any anchor the finest grid’s anchor under its centre', () => {
    expect(centreCandidates(grid, [50, 50, 52, 52], 2.5)).toEqual([6 * 52 + 6]);
  });
});

describe('assignment', () => {
  const truth: Box = [100, 100, 200, 200];

  it('without predictions, makes every candidate positive for its box’s class', () => {
    const { positives, candidate } = assignAnchors(grid, [{ box: truth, classIndex: 3 }]);
    expect(positives).toHaveLength(59);
    expect(positives.every((p) => p.classIndex === 3 && p.truth === 0 && candidate[p.anchor] === 1)).toBe(
      true,
    );
    expect(candidate.reduce((n, v) => n + v, 0)).toBe(59);
  });

  it('keeps the k candidates whose predicted box fits best, k the sum of the ten best IoUs', () => {
    const good = new Set([2704 + 9 * 26 + 9, 2704 + 9 * 26 + 10, 3380 + 4 * 13 + 4]);
    const { positives, candidate } = assignAnchors(grid, [{ box: truth, classIndex: 1 }], {
      ...DEFAULT_ASSIGN,
      predicted: (a) => (good.has(a) ? truth : [0, 0, 10, 10]),
    });
    expect(positives.map((p) => p.anchor).sort()).toEqual([...good].sort());
    expect(positives.every((p) => p.iou === 1)).toBe(true);
    // The candidates left out are still marked, so they are never sampled as background.
    expect(candidate.reduce((n, v) => n + v, 0)).toBe(59);
  });

  it('keeps at least one positive even when no prediction overlaps', () => {
    const { positives } = assignAnchors(grid, [{ box: truth, classIndex: 1 }], {
      ...DEFAULT_ASSIGN,
      predicted: () => [0, 0, 10, 10],
    });
    expect(positives).toHaveLength(1);
  });

  it('gives an anchor two boxes want to the box its prediction fits better', () => {
    const other: Box = [110, 100, 210, 200];
    const shared = 2704 + 9 * 26 + 9; // centre (152, 152): a candidate of both
    const { positives } = assignAnchors(
      grid,
      [
        { box: truth, classIndex: 1 },
        { box: other, classIndex: 5 },
      ],
      { ...DEFAULT_ASSIGN, predicted: (a) => (a === shared ? [108, 100, 208, 200] : [0, 0, 10, 10]) },
    );
    expect(positives.filter((p) => p.anchor === shared)).toEqual([
      expect.objectContaining({ truth: 1, classIndex: 5 }),
    ]);
  });
});

describe('the predicted box at an anchor', () => {
  it('is the box decodeYolox reads from the same raw output', () => {
    for (const anchor of [0, 57, 2704 + 300, 3548]) {
      const raw = new Float32Array(3549 * 7);
      raw.set([0.3, 0.8, Math.log(2.5), Math.log(1.5), 0.9, 0.8, 0.1], anchor * 7);
      const [decoded] = decodeYolox(raw, letterbox(416, 416, 416), 2, { minScore: 0.5, nmsIou: 0.5 });
      const box = anchorBox(raw, grid, 2, anchor);
      // decodeYolox clips to the frame; compare where the box lies inside it.
      box.forEach((v, i) => {
        if (v > 0 && v < 416) expect(decoded!.box[i]).toBeCloseTo(v, 3);
      });
    }
  });
});

import { DEFAULT_DETECTOR, proposeLanes } from './detect';
import { drawRoad, markingCentre, WHITE, YELLOW, type DrawnRoad } from './synthetic-road';

/** A 320×240 road: a solid white line on the left, white dashes in the middle, a yellow double line on the right. */
const ROAD: DrawnRoad = {
  width: 320,
  height: 240,
  vanishing: [160, 96],
  markings: [
    { bottomX: 40, bottomWidth: 8, colour: WHITE },
    { bottomX: 170, bottomWidth: 8, colour: WHITE, pattern: { on: 12, off: 12 } },
    { bottomX: 282, bottomWidth: 6, colour: YELLOW },
    { bottomX: 298, bottomWidth: 6, colour: YELLOW },
  ],
};
/** Bottom x of the lines a proposal should lie on: the double line's middle stands for it. */
const TRUTH_X = [40, 170, 290];

const worstError = (points: Array<[number, number]>, bottomX: number) =>
  Math.max(
    ...points.map(([x, y]) => Math.abs(x - markingCentre(ROAD, { ...ROAD.markings[0]!, bottomX }, y))),
  );

describe('proposeLanes', () => {
  it('finds the drawn solid, dashed and double lines within two pixels, left to right', () => {
    const proposals = proposeLanes(drawRoad(ROAD));
    expect(proposals).toHaveLength(3);
    proposals.forEach((p, i) => {
      expect(worstError(p.points, TRUTH_X[i]!)).toBeLessThan(2);
      // Each reaches down near the bottom and up into the region's upper half.
      const ys = p.points.map((q) => q[1]);
      expect(Math.max(...ys)).toBeGreaterThan(225);
      expect(Math.min(...ys)).toBeLessThan(160);
      expect(p.conf).toBeGreaterThan(0.6);
    });
    expect(proposals.map((p) => [p.markings, p.colour])).toEqual([
      [1, 'white'],
      [1, 'white'],
      [2, 'yellow'],
    ]);
    // The dashes paint about half the rows of their span; the solid line nearly all.
    expect(proposals[1]!.evidence.coverage).toBeGreaterThan(0.35);
    expect(proposals[1]!.evidence.coverage).toBeLessThan(0.65);
    expect(proposals[0]!.evidence.coverage).toBeGreaterThan(0.9);
  });

  it('finds nothing on a bare road, nor in a bright block too wide to be paint, nor above the region', () => {
    expect(proposeLanes(drawRoad({ ...ROAD, markings: [] }))).toEqual([]);
    const img = drawRoad({ ...ROAD, markings: [] });
    for (let y = 150; y < 240; y++)
      for (let x = 100; x < 160; x++) img.rgb.set([240, 240, 240], (y * img.width + x) * 3);
    expect(proposeLanes(img)).toEqual([]);
    // Only the rows of the region (from roiTop of the height down) are looked at.
    const high = drawRoad({ ...ROAD, vanishing: [160, 0], height: 100, markings: [ROAD.markings[0]!] });
    expect(proposeLanes(high, { ...DEFAULT_DETECTOR, roiTop: 0.45 })).toHaveLength(1);
    expect(proposeLanes(high, { ...DEFAULT_DETECTOR, roiTop: 1 })).toEqual([]);
  });

  it('keeps an almost horizontal stop line out, and a faint line below the contrast out', () => {
    const img = drawRoad({ ...ROAD, markings: [] });
    for (let y = 200; y < 206; y++)
      for (let x = 20; x < 300; x++) img.rgb.set([240, 240, 240], (y * img.width + x) * 3);
    expect(proposeLanes(img)).toEqual([]);
    const faint = drawRoad({ ...ROAD, markings: [{ bottomX: 40, bottomWidth: 8, colour: [85, 85, 85] }] });
    expect(proposeLanes(faint)).toEqual([]);
  });
});

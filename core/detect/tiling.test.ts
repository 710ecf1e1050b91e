import {
  axisStarts,
  cutByTile,
  horizonBand,
  keepMerged,
  planSlices,
  tileToFrame,
  type SlicingRule,
} from './tiling';

const rule: SlicingRule = {
  minObjectPx: 16,
  modelMinPx: 32,
  minAspect: 2,
  horizon: 0.46,
  horizonMargin: 0.1,
  tileMinScore: 0.45,
};
const box = (t: { x: number; y: number; width: number; height: number }) => [t.x, t.y, t.width, t.height];

describe('tile planning', () => {
  it('cuts a wide 1242×375 frame into coarse tiles at the input size and fine ones over the horizon band', () => {
    const plan = planSlices(1242, 375, 416, 'auto', rule);
    expect(plan.sliced).toBe(true);
    expect(plan.reason).toMatch(/aspect 3.31 ≥ 2 and a 16 px object reaches the model at 5.36 px/);
    const [coarse, fine] = plan.levels;
    // 32 px at 416/1242 is 96 frame px: objects up to 192 px wide must fit whole in a coarse tile.
    expect(coarse).toMatchObject({ level: 'coarse', scale: 1, overlap: 192, band: [0, 375] });
    expect(coarse!.tiles.map(box)).toEqual([
      [0, 0, 416, 375],
      [207, 0, 416, 375],
      [413, 0, 416, 375],
      [620, 0, 416, 375],
      [826, 0, 416, 375],
    ]);
    // 16 px magnified to 32: tiles of 208 px, one row centred on the band the horizon (172.5) gives.
    expect(fine).toMatchObject({ level: 'fine', scale: 2, overlap: 64, band: [119, 258] });
    expect(new Set(fine!.tiles.map((t) => `${t.y} ${t.width}×${t.height}`))).toEqual(new Set(['85 208×208']));
    expect(fine!.tiles.map((t) => t.x)).toEqual([0, 129, 259, 388, 517, 646, 776, 905, 1034]);
    expect(plan.tiles).toEqual([...coarse!.tiles, ...fine!.tiles]);
    expect(plan.tileMinScore).toBe(0.45);
  });

  it('does not slice a small square frame, nor a 16:9 one, under auto; on slices both; off never', () => {
    expect(planSlices(416, 416, 416, 'auto', rule)).toMatchObject({
      sliced: false,
      tiles: [],
      tileMinScore: null,
    });
    // The input-size tiles would be the frame itself: only the fine level is left.
    expect(planSlices(416, 416, 416, 'on', rule).levels.map((l) => l.level)).toEqual(['fine']);
    const hd = planSlices(1280, 720, 416, 'auto', rule);
    expect(hd.sliced).toBe(false);
    expect(hd.reason).toMatch(/aspect 1.78 is below 2/);
    const on = planSlices(1280, 720, 416, 'on', rule);
    expect(on.levels.map((l) => [l.level, l.tiles.length])).toEqual([
      ['coarse', 15],
      ['fine', 9],
    ]);
    expect(planSlices(1242, 375, 416, 'off', rule)).toMatchObject({
      sliced: false,
      reason: 'slicing is off',
    });
    // Nothing to magnify when the model resolves the smallest object asked for at tile scale 1.
    const plain = planSlices(1242, 375, 416, 'on', { ...rule, modelMinPx: 16 });
    expect(plain.levels.map((l) => l.level)).toEqual(['coarse']);
  });

  it('keeps every tile inside the frame, and covers the whole height with fine tiles when the margin is 1', () => {
    const plan = planSlices(1242, 375, 416, 'auto', { ...rule, horizonMargin: 1 });
    const fine = plan.levels.find((l) => l.level === 'fine')!;
    expect(fine.band).toEqual([0, 375]);
    expect([...new Set(fine.tiles.map((t) => t.y))]).toEqual([0, 84, 167]);
    for (const t of plan.tiles) expect(t.x + t.width <= 1242 && t.y + t.height <= 375).toBe(true);
  });

  it('spreads tile starts evenly with at least the overlap asked', () => {
    expect(axisStarts(300, 416, 50)).toEqual([0]);
    const starts = axisStarts(1000, 300, 60);
    expect(starts).toEqual([0, 233, 467, 700]);
    for (let i = 1; i < starts.length; i++)
      expect(starts[i - 1]! + 300 - starts[i]!).toBeGreaterThanOrEqual(60);
  });
});

describe('the horizon band', () => {
  it('holds every object up to the tallest asked for, standing on a level road, from 1.1 to 3.3 m high', () => {
    const [top, bottom] = horizonBand(375, 32, { ...rule, horizonMargin: 0 });
    const horizon = 0.46 * 375;
    for (const metres of [1.1, 1.5, 1.75, 2.5, 3.3])
      for (const h of [16, 24, 32]) {
        const foot = horizon + (h * 1.65) / metres;
        expect(foot - h).toBeGreaterThanOrEqual(top - 0.5);
        expect(foot).toBeLessThanOrEqual(bottom + 0.5);
      }
  });
  it('widens by the margin each way, clipped to the frame', () => {
    expect(horizonBand(375, 32, rule)).toEqual([119, 258]);
    expect(horizonBand(375, 32, { ...rule, horizon: 0.05 })).toEqual([0, 104]);
  });
});

describe('tile boxes', () => {
  const tile = { x: 400, y: 0, width: 416, height: 375 };
  const frame = { width: 1242, height: 375 };
  it('maps tile pixels back to frame pixels', () => {
    expect(tileToFrame([10, 20, 30, 40], tile)).toEqual([410, 20, 430, 40]);
  });
  it('calls a box cut only at an inner tile edge, not at the frame’s edge', () => {
    expect(cutByTile([401, 100, 420, 120], tile, frame, 2)).toBe(true);
    expect(cutByTile([800, 100, 816, 120], tile, frame, 2)).toBe(true);
    expect(cutByTile([500, 0, 520, 375], tile, frame, 2)).toBe(false);
    expect(cutByTile([0, 0, 20, 20], { ...tile, x: 0 }, frame, 2)).toBe(false);
    // The fine row's top and bottom edges lie inside the frame: they cut too.
    const row = { x: 0, y: 85, width: 208, height: 208 };
    expect(cutByTile([20, 86, 30, 100], row, frame, 2)).toBe(true);
    expect(cutByTile([20, 280, 30, 292], row, frame, 2)).toBe(true);
  });
  it('holds detections only tiles saw to the floor, not those the whole frame saw', () => {
    const plan = planSlices(1242, 375, 416, 'auto', rule);
    expect(keepMerged({ score: 0.44, whole: false }, plan)).toBe(false);
    expect(keepMerged({ score: 0.45, whole: false }, plan)).toBe(true);
    expect(keepMerged({ score: 0.31, whole: true }, plan)).toBe(true);
  });
});

import { axisStarts, cutByTile, planSlices, tileToFrame, type SlicingRule } from './tiling';

const rule: SlicingRule = { minObjectPx: 16, modelMinPx: 16, minAspect: 2 };

describe('tile planning', () => {
  it('slices a wide 1242×375 frame into overlapping tiles at the model’s input size that cover it', () => {
    const plan = planSlices(1242, 375, 416, 'auto', rule);
    expect(plan.sliced).toBe(true);
    expect(plan.tileScale).toBe(1);
    // 16 px at 416/1242 is 5.4 px in the whole frame: objects up to 96 px wide must fit whole in a tile.
    expect(plan.overlap).toBe(96);
    expect(plan.tiles.map((t) => [t.x, t.y, t.width, t.height])).toEqual([
      [0, 0, 416, 375],
      [275, 0, 416, 375],
      [551, 0, 416, 375],
      [826, 0, 416, 375],
    ]);
    expect(plan.reason).toMatch(/aspect 3.31 ≥ 2 and a 16 px object reaches the model at 5.36 px/);
  });

  it('does not slice a small square frame, nor a 16:9 one, under auto; on slices the 16:9 one; off never', () => {
    expect(planSlices(416, 416, 416, 'auto', rule)).toMatchObject({ sliced: false, tiles: [] });
    expect(planSlices(416, 416, 416, 'on', rule).reason).toMatch(/no finer than the whole frame/);
    const hd = planSlices(1280, 720, 416, 'auto', rule);
    expect(hd.sliced).toBe(false);
    expect(hd.reason).toMatch(/aspect 1.78 is below 2/);
    expect(planSlices(1280, 720, 416, 'on', rule).tiles).toHaveLength(8);
    expect(planSlices(1242, 375, 416, 'off', rule)).toMatchObject({
      sliced: false,
      reason: 'slicing is off',
    });
  });

  it('upscales tiles when the model needs objects taller than the smallest one asked for', () => {
    const plan = planSlices(1242, 375, 416, 'auto', { ...rule, modelMinPx: 24 });
    expect(plan.tileScale).toBeCloseTo(416 / 277);
    // The overlap (2 × 24 px ÷ 0.335 = 144) is capped at half a tile: 8 columns by 2 rows.
    expect(plan.overlap).toBe(138);
    expect(plan.tiles).toHaveLength(16);
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
  });
});

import {
  contextRegion,
  coverage,
  isSegmentable,
  maskIou,
  maskPolygons,
  objectMask,
  segmentedMask,
  SEGMENTABLE,
  type GridMask,
} from '.';

const grid = (rows: string[]): GridMask => ({
  width: rows[0]!.length,
  height: rows.length,
  data: Uint8Array.from(rows.join('').split(''), (c) => (c === '#' ? 1 : 0)),
});

describe('segmentation', () => {
  it('maps the ontology classes onto VOC, trucks onto car and bus, and knows no others', () => {
    expect(SEGMENTABLE.motorcycle).toEqual(['motorbike']);
    expect(SEGMENTABLE.rider).toEqual(['person']);
    expect(SEGMENTABLE.truck).toEqual(['car', 'bus']);
    expect(isSegmentable('traffic_sign')).toBe(false);
    expect(isSegmentable('constructor')).toBe(false);
  });

  it('gives the model a square crop with context, clipped to the frame', () => {
    expect(contextRegion([100, 100, 200, 150], { width: 1000, height: 500 })).toEqual({
      left: 75,
      top: 50,
      width: 150,
      height: 150,
    });
    expect(contextRegion([0, 0, 100, 100], { width: 120, height: 500 })).toEqual({
      left: 0,
      top: 0,
      width: 120,
      height: 125,
    });
  });

  it('keeps only the wanted classes inside the box', () => {
    // 4×2 grid of 3 classes over a region 40×20 wide at (10, 0); the box spans x 10..40.
    const logits = Float32Array.from([
      ...[0, 5, 0],
      ...[0, 5, 0],
      ...[0, 0, 5],
      ...[0, 5, 0],
      ...[5, 0, 0],
      ...[0, 5, 0],
      ...[0, 5, 0],
      ...[0, 5, 0],
    ]);
    const mask = objectMask(
      logits,
      { width: 4, height: 2, classes: 3 },
      [1],
      { left: 10, top: 0, width: 40, height: 20 },
      [10, 0, 40, 20],
    );
    expect([...mask.data]).toEqual([1, 1, 0, 0, 0, 1, 1, 0]);
    expect(coverage(mask, { left: 10, top: 0, width: 40, height: 20 }, [10, 0, 40, 20])).toBeCloseTo(
      400 / 600,
    );
  });

  it('traces each component as a ring along pixel edges, joining diagonal neighbours', () => {
    const region = { left: 0, top: 0, width: 40, height: 40 };
    const mask = grid([
      '........................................',
      '.######.................................',
      '.######.................................',
      '.######.................................',
      '.......#................................',
      '........................................',
    ]);
    const rings = maskPolygons({ ...mask, height: 6 }, { ...region, height: 6 }, 0.1);
    expect(rings).toHaveLength(1);
    // The diagonal pixel at (7, 4) belongs to the square's ring.
    expect(maskIou(rings, [[1, 1, 7, 1, 7, 4, 8, 4, 8, 5, 7, 5, 7, 4, 1, 4]])).toBeGreaterThan(0.95);
  });

  it('flags a mask that covers too little of its box', () => {
    const region = { left: 0, top: 0, width: 10, height: 10 };
    const small = grid(['##........', ...Array<string>(9).fill('..........')]);
    expect(segmentedMask(small, region, [0, 0, 10, 10]).qualityFlags).toEqual(['mask_low_coverage']);
    const big = grid(Array<string>(10).fill('#####.....'));
    const out = segmentedMask(big, region, [0, 0, 10, 10]);
    expect(out.qualityFlags).toEqual([]);
    expect(out.coverage).toBe(0.5);
    expect(maskIou(out.polygons, [[0, 0, 5, 0, 5, 10, 0, 10]])).toBe(1);
  });

  it('measures mask IoU of rings', () => {
    expect(maskIou([[0, 0, 10, 0, 10, 10, 0, 10]], [[5, 0, 15, 0, 15, 10, 5, 10]])).toBeCloseTo(50 / 150);
    expect(maskIou([], [])).toBe(0);
  });
});

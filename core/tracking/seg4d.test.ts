import { DEFAULT_SEG4D_THRESHOLDS, polygonsArea, seg4dConsistency, type Seg4dObject } from './seg4d';

/** A square mask ring of side `s` at (x, y). */
const square = (x: number, y: number, s: number) => [x, y, x + s, y, x + s, y + s, x, y + s];

const object = (
  i: number,
  box: [number, number, number, number],
  polygons: number[][] | null,
): Seg4dObject => ({
  objectId: `o${i}`,
  frameId: `f${i}`,
  frameIndex: i,
  box,
  polygons,
});

describe('polygonsArea', () => {
  it('measures rings by the shoelace formula whichever way they wind, and sums them', () => {
    expect(polygonsArea([square(0, 0, 10)])).toBe(100);
    expect(polygonsArea([[0, 0, 0, 10, 10, 10, 10, 0]])).toBe(100);
    expect(polygonsArea([square(0, 0, 10), [0, 0, 4, 0, 0, 3]])).toBe(106);
    expect(polygonsArea([[0, 0, 5, 5]])).toBe(0);
  });
});

describe('seg4dConsistency', () => {
  it('finds a track whose masks fill their boxes and grow smoothly consistent', () => {
    const r = seg4dConsistency(
      [object(0, [0, 0, 10, 10], [square(0, 0, 10)]), object(1, [0, 0, 12, 12], [square(0, 0, 12)])],
      DEFAULT_SEG4D_THRESHOLDS,
    );
    expect(r).toMatchObject({ objects: 2, masked: 2, mask_coverage: 1, consistent: true, min_box_iou: 1 });
    expect(r.frames[1]).toMatchObject({ mask_area: 144, area_ratio: 1.44, flags: [] });
  });

  it('flags a mask that does not fill its box, a jump in area, and a frame without a mask', () => {
    const r = seg4dConsistency(
      [
        object(2, [0, 0, 10, 10], [square(0, 0, 30)]), // grown 9 times in one frame
        object(0, [0, 0, 10, 10], [square(0, 0, 10)]),
        object(1, [0, 0, 40, 40], [square(0, 0, 10)]), // mask a sixteenth of its box
        object(3, [0, 0, 30, 30], null),
      ],
      DEFAULT_SEG4D_THRESHOLDS,
    );
    expect(r.frames.map((f) => [f.frame_index, f.flags])).toEqual([
      [0, []],
      [1, ['mask_box_mismatch']],
      [2, ['mask_box_mismatch', 'area_jump']],
      [3, ['mask_missing']],
    ]);
    expect(r.consistent).toBe(false);
    expect(r.flag_counts).toEqual({ mask_box_mismatch: 2, area_jump: 1, mask_missing: 1, empty_mask: 0 });
    expect(r.frames[1]!.box_iou).toBeCloseTo(100 / 1600, 12);
  });

  it('allows more change across a gap of frames, and calls a box-only track consistent', () => {
    const gap = seg4dConsistency(
      [object(0, [0, 0, 10, 10], [square(0, 0, 10)]), object(3, [0, 0, 25, 25], [square(0, 0, 25)])],
      DEFAULT_SEG4D_THRESHOLDS,
    );
    // 6.25 times the area over 3 frames is within 2³.
    expect(gap.consistent).toBe(true);
    const boxes = seg4dConsistency([object(0, [0, 0, 10, 10], null)], DEFAULT_SEG4D_THRESHOLDS);
    expect(boxes).toMatchObject({ masked: 0, consistent: true, mean_box_iou: null });
  });
});

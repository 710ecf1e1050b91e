import { InputError } from '../../errors';
import { MASK_CASE } from './fixtures/cases';
import {
  boxIou,
  maskIou,
  rleArea,
  rleBoundingBox,
  rleFromPolygon,
  rleFromString,
  rleUnion,
  segmentationToRle,
  withBoundingBox,
} from './mask';

const { input, reference } = MASK_CASE;
const rles = input.shapes.map((s) => segmentationToRle(s.segmentation, s.height, s.width));

/** The runs of the pixels themselves: zero-length runs inside folded away, as decoding them would. */
function pixelRuns(counts: Uint32Array): number[] {
  const runs: number[] = [];
  counts.forEach((c, j) => {
    if (c === 0) return;
    const value = j % 2;
    if (runs.length === 0 && value === 1) runs.push(0);
    if (runs.length > 0 && (runs.length - 1) % 2 === value) runs[runs.length - 1]! += c;
    else runs.push(c);
  });
  return runs;
}

describe('the mask API port against pycocotools', () => {
  it('rasterises polygons and reads run lengths into the same runs, area and box', () => {
    rles.forEach((rle, i) => {
      const expected = reference.shapes[i]!;
      expect({ shape: i, runs: pixelRuns(rle.counts) }).toEqual({ shape: i, runs: expected.runs });
      expect(rleArea(rle)).toBe(expected.area);
      expect(rleBoundingBox(rle)).toEqual(expected.bbox);
    });
  });

  it("decodes pycocotools' compressed strings into the same runs", () => {
    reference.shapes.forEach((expected, i) => {
      const { height, width } = input.shapes[i]!;
      // Uncompressed input with zero-length runs stays uncanonical in pycocotools' string too.
      const decoded = Array.from(rleFromString(expected.compressed, height, width).counts);
      expect(decoded).toEqual(Array.from(rles[i]!.counts));
    });
  });

  it('gives the same mask IoU matrices, crowd regions included', () => {
    input.iouPairs.forEach((pair, p) => {
      const matrix = pair.dt.map((d) =>
        pair.gt.map((g, j) =>
          maskIou(withBoundingBox(rles[d]!), withBoundingBox(rles[g]!), pair.iscrowd[j] === 1),
        ),
      );
      expect(matrix).toEqual(reference.ious[p]);
    });
  });

  it('gives the same box IoUs', () => {
    const { dt, gt, iscrowd } = input.boxes;
    const matrix = dt.map((d) =>
      gt.map((g, j) => boxIou(d[0]!, d[1]!, d[2]!, d[3]!, g[0]!, g[1]!, g[2]!, g[3]!, iscrowd[j] === 1)),
    );
    expect(matrix).toEqual(reference.boxIous);
  });
});

describe('mask helpers', () => {
  it('unions masks of one size and gives an empty mask for mixed sizes', () => {
    const a = rleFromPolygon([0, 0, 4, 0, 4, 4, 0, 4], 10, 10);
    const b = rleFromPolygon([2, 2, 8, 2, 8, 8, 2, 8], 10, 10);
    expect(rleArea(rleUnion([a, b]))).toBe(rleArea(a) + rleArea(b) - 4);
    expect(rleUnion([a, rleFromPolygon([0, 0, 4, 0, 4, 4], 10, 11)]).counts.length).toBe(0);
  });

  it('refuses polygons of fewer than three points and empty polygon lists', () => {
    expect(() => segmentationToRle([[1, 2, 3, 4]], 10, 10)).toThrow(InputError);
    expect(() => segmentationToRle([], 10, 10)).toThrow(InputError);
  });
});

import { textCrops } from './cascade';
import { isPlateShaped, mergeTextLines, pixelateBlock, pixelateRegions, toRedactionRegion } from './regions';
import { decodeTextMap, textInputSize } from './text-map';
import { decodeYunet, yunetInputSide } from './yunet';

describe('YuNet decode', () => {
  /** Outputs for a 64×32 input: strides 8 (8×4 grid), 16 (4×2), 32 (2×1), zero except where set. */
  const outputs = () => {
    const o: Record<string, Float32Array> = {};
    for (const [s, n] of [
      [8, 32],
      [16, 8],
      [32, 2],
    ] as const) {
      o[`cls_${s}`] = new Float32Array(n);
      o[`obj_${s}`] = new Float32Array(n);
      o[`bbox_${s}`] = new Float32Array(n * 4);
    }
    return o;
  };
  it('decodes centre = (col + dx)·s, size = exp(dw)·s, score = sqrt(cls·obj), then NMS', () => {
    const o = outputs();
    // stride 16, row 1, col 2 (index 1·4 + 2 = 6): centre (2.5·16, 1.5·16) = (40, 24), size 16·e^0.5.
    o.cls_16![6] = 0.81;
    o.obj_16![6] = 1.2; // clamped to 1
    o.bbox_16!.set([0.5, 0.5, 0.5, 0], 24);
    // A weaker duplicate of the same face at stride 8 is suppressed; a low score is dropped.
    // (row 3, col 5 of the 8×4 grid: centre (40, 24), 24×16.)
    o.cls_8![29] = 0.5;
    o.obj_8![29] = 0.5;
    o.bbox_8!.set([0, 0, Math.log(3), Math.log(2)], 116);
    o.cls_32![0] = 0.1;
    o.obj_32![0] = 0.1;
    const faces = decodeYunet(o, 64, 32, { minScore: 0.3 });
    const w = 16 * Math.exp(0.5);
    expect(faces).toHaveLength(1);
    expect(faces[0]!.score).toBeCloseTo(0.9);
    expect(faces[0]!.box[0]).toBeCloseTo(40 - w / 2);
    expect(faces[0]!.box[3]).toBeCloseTo(24 + 8);
  });
  it('refuses inputs that are not multiples of 32 and outputs that do not fit the grid', () => {
    expect(() => decodeYunet(outputs(), 60, 32, { minScore: 0.5 })).toThrow(/multiple of 32/);
    const o = outputs();
    o.cls_8 = new Float32Array(3);
    expect(() => decodeYunet(o, 64, 32, { minScore: 0.5 })).toThrow(/stride 8/);
    expect(yunetInputSide(300)).toBe(320);
  });
});

describe('DB text map decode', () => {
  it('finds connected regions, scores them by mean probability and unclips them', () => {
    const w = 40;
    const h = 20;
    const prob = new Float32Array(w * h);
    const fill = (x1: number, y1: number, x2: number, y2: number, v: number) => {
      for (let y = y1; y < y2; y++) for (let x = x1; x < x2; x++) prob[y * w + x] = v;
    };
    fill(2, 2, 22, 8, 0.9); // a word
    fill(30, 10, 38, 16, 0.35); // faint: above the binary threshold, below the box score
    fill(5, 15, 6, 16, 0.95); // a single pixel of noise
    const boxes = decodeTextMap(prob, w, h, { binaryThreshold: 0.3, minBoxScore: 0.6 });
    expect(boxes).toHaveLength(1);
    const d = (20 * 6 * 1.5) / (2 * 26);
    expect(boxes[0]!.box.slice(0, 2)).toEqual([0, 0]);
    expect(boxes[0]!.box[2]).toBeCloseTo(22 + d);
    expect(boxes[0]!.score).toBeCloseTo(0.9);
    expect(textInputSize(1920, 1080, 960)).toEqual({ width: 960, height: 544 });
  });
});

describe('redaction regions', () => {
  it('keeps plate-shaped text only and pixelates plates by their height', () => {
    expect(isPlateShaped({ box: [0, 0, 120, 30], score: 1 }, 1280, 720)).toBe(true);
    expect(isPlateShaped({ box: [0, 0, 900, 30], score: 1 }, 1280, 720)).toBe(false); // a banner
    expect(isPlateShaped({ box: [0, 0, 30, 30], score: 1 }, 1280, 720)).toBe(false);
    expect(toRedactionRegion('face', { box: [10, 10, 60, 70], score: 0.91234 }, 100, 100)).toEqual({
      kind: 'face',
      bbox: [0, 0, 70, 82],
      score: 0.912,
    });
    expect(pixelateBlock('plate', 120, 30)).toBe(15);
    expect(pixelateBlock('face', 60, 90)).toBe(10);
  });
});

describe('text line merge', () => {
  it('joins the word boxes of one plate line, not boxes of different lines or far apart', () => {
    const s = 1;
    const merged = mergeTextLines([
      { box: [100, 10, 160, 40], score: 0.9 },
      { box: [175, 12, 220, 41], score: s }, // same line, gap 15 < 0.8·31
      { box: [400, 10, 450, 40], score: s }, // same line but far
      { box: [100, 60, 160, 90], score: s }, // next line
    ]);
    expect(merged).toEqual([
      { box: [100, 10, 220, 41], score: 0.9 },
      { box: [100, 60, 160, 90], score: s },
      { box: [400, 10, 450, 40], score: s },
    ]);
  });
});

describe('textCrops', () => {
  const opts = { fineScale: 0.5, minTextHeight: 16 };
  it('grows each candidate by its height above and below and twice its height at the sides, inside the frame', () => {
    expect(textCrops([[100, 100, 200, 120]], 1000, 500, { fineScale: 1, minTextHeight: 16 })).toEqual([
      { box: [60, 80, 240, 140], scale: 1 },
    ]);
    expect(textCrops([[0, 0, 50, 20]], 60, 30, { fineScale: 1, minTextHeight: 16 })[0]!.box).toEqual([
      0, 0, 60, 30,
    ]);
  });
  it('joins crops that touch and keeps apart those that do not', () => {
    const crops = textCrops(
      [
        [0, 0, 10, 10],
        [200, 0, 210, 10],
        [40, 0, 50, 10],
      ],
      1000,
      500,
      opts,
    );
    expect(crops).toHaveLength(2);
    expect(crops.map((c) => c.box)).toEqual([
      [0, 0, 70, 20],
      [180, 0, 230, 20],
    ]);
  });
  it('upscales small text to the height the detector reads well, at most 3×', () => {
    expect(textCrops([[0, 0, 100, 16]], 1000, 500, opts)[0]!.scale).toBeCloseTo(1);
    expect(textCrops([[0, 0, 100, 4]], 1000, 500, opts)[0]!.scale).toBeCloseTo(1.5);
    expect(textCrops([[0, 0, 100, 64]], 1000, 500, opts)[0]!.scale).toBe(0.5);
  });
});

describe('pixelateRegions', () => {
  it('fills each block of a region with its mean colour and leaves the rest of the frame alone', () => {
    const width = 16;
    const height = 8;
    const rgb = Buffer.alloc(width * height * 3);
    for (let i = 0; i < rgb.length; i++) rgb[i] = (i * 37) % 256;
    const before = Buffer.from(rgb);
    pixelateRegions(rgb, width, height, [{ kind: 'plate', bbox: [0, 0, 8, 8], score: 1 }]);
    const px = (x: number, y: number) => [...rgb.subarray((y * width + x) * 3, (y * width + x) * 3 + 3)];
    // A plate 8 high gets blocks of 4 (at least 4): the top-left block is one colour, its mean.
    for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) expect(px(x, y)).toEqual(px(0, 0));
    let red = 0;
    for (let y = 0; y < 4; y++) for (let x = 0; x < 4; x++) red += before[(y * width + x) * 3]!;
    expect(px(0, 0)[0]).toBe(Math.round(red / 16));
    expect(rgb.subarray(8 * 3, width * 3)).toEqual(before.subarray(8 * 3, width * 3));
  });
});

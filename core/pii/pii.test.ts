import { packRectangles, subMap, writePlanar, writeResampledPlanar, type Placement } from './packing';
import { isPlateShaped, mergeTextLines, pixelateBlock, pixelateRegions, toRedactionRegion } from './regions';
import { FACE_RULES, PLATE_RULES, searchCrops } from './search';
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

describe('searchCrops', () => {
  const frame = { width: 1920, height: 1080 };
  const opts = { targetPx: 16, maxUpscale: 2, minPx: 8 };
  it('cuts the band of a vehicle where plates sit, grown by 5 %, at the scale that brings its smallest plate to the target', () => {
    // A car 300 high: smallest plate 0.06·300 = 18 px → scale 16/18; band 35–100 % of its height.
    const [crop] = searchCrops([{ box: [100, 500, 500, 800], className: 'car' }], PLATE_RULES, frame, opts);
    expect(crop!.scale).toBeCloseTo(16 / 18);
    expect(crop).toMatchObject({ left: 80, top: 595, width: 440, height: 215 });
  });
  it('enlarges far vehicles at most maxUpscale, and leaves out those whose plate would be under minPx', () => {
    const crops = searchCrops(
      [
        { box: [0, 0, 200, 150], className: 'car' }, // plate 9 px: 16/9 = 1.78
        { box: [0, 0, 120, 100], className: 'car' }, // plate 6 px: not looked for
        { box: [300, 0, 500, 140], className: 'motorcycle' }, // plate 7 px: not looked for
        { box: [600, 0, 700, 100], className: 'person' }, // no plate rule
      ],
      PLATE_RULES,
      frame,
      { ...opts, maxUpscale: 1.5 },
    );
    expect(crops).toHaveLength(1);
    expect(crops[0]!.scale).toBe(1.5);
  });
  it('leaves faces the whole-frame pass already sees at the target to it', () => {
    const persons = [
      { box: [0, 0, 100, 900], className: 'person' }, // face 90 px: 24/90 ≤ 1/3, seen by the whole frame
      { box: [500, 100, 560, 400], className: 'person' }, // face 30 px: needs 0.8
    ] as const;
    const crops = searchCrops(
      persons.map((p) => ({ ...p, box: [...p.box] })),
      FACE_RULES,
      frame,
      {
        targetPx: 24,
        maxUpscale: 3,
        minPx: 8,
        coveredScale: 1 / 3,
      },
    );
    expect(crops).toEqual([{ left: 497, top: 92, width: 66, height: 166, scale: 0.8 }]);
  });
  it('joins crops that mostly overlap (one vehicle named twice) into their union at the larger scale', () => {
    const crops = searchCrops(
      [
        { box: [100, 100, 500, 400], className: 'bus' },
        { box: [104, 98, 506, 400], className: 'truck' },
        { box: [1200, 100, 1500, 400], className: 'car' },
      ],
      PLATE_RULES,
      frame,
      opts,
    );
    expect(crops).toHaveLength(2);
    expect(crops[0]).toMatchObject({ left: 80, width: 447 });
    expect(crops[0]!.scale).toBeCloseTo(16 / (0.035 * 300));
  });
});

describe('packRectangles', () => {
  const opts = { gap: 16, align: 32, maxWidth: 768, maxHeight: 416 };
  const apart = (a: Placement, b: Placement) =>
    a.input !== b.input ||
    a.x >= b.x + b.width + 16 ||
    b.x >= a.x + a.width + 16 ||
    a.y >= b.y + b.height + 16 ||
    b.y >= a.y + a.height + 16;
  it('lays crops out without overlap, the gap between them, inside inputs whose sides are multiples of the alignment', () => {
    const sizes = [
      { width: 512, height: 288 },
      { width: 120, height: 150 },
      { width: 90, height: 130 },
      { width: 200, height: 60 },
      { width: 47, height: 63 },
    ];
    const { inputs, placements } = packRectangles(sizes, opts);
    // The small crops go beside and under the large one: one input.
    expect(inputs).toHaveLength(1);
    const [{ width, height }] = inputs as [{ width: number; height: number }];
    expect(width % 32).toBe(0);
    expect(height % 32).toBe(0);
    expect(width).toBeLessThanOrEqual(768);
    expect(height).toBeLessThanOrEqual(416);
    placements.forEach((p, i) => {
      expect(p).toMatchObject(sizes[i]!);
      expect(p.x + p.width).toBeLessThanOrEqual(width);
      expect(p.y + p.height).toBeLessThanOrEqual(height);
      placements.forEach((q, j) => j !== i && expect(apart(p, q)).toBe(true));
    });
  });
  it('opens another input when the crops do not fit the limits, and gives a larger crop an input of its own size', () => {
    const { inputs, placements } = packRectangles(
      [
        { width: 700, height: 300 },
        { width: 700, height: 300 },
        { width: 1280, height: 720 },
      ],
      opts,
    );
    expect(inputs).toEqual([
      { width: 1280, height: 736 },
      { width: 704, height: 320 },
      { width: 704, height: 320 },
    ]);
    expect(placements.map((p) => p.input)).toEqual([1, 2, 0]);
  });
  it('gives nothing for no crops, and one crop its own size rounded up', () => {
    expect(packRectangles([], opts)).toEqual({ inputs: [], placements: [] });
    expect(packRectangles([{ width: 100, height: 40 }], opts)).toEqual({
      inputs: [{ width: 128, height: 64 }],
      placements: [{ input: 0, x: 0, y: 0, width: 100, height: 40 }],
    });
  });
});

describe('writePlanar and subMap', () => {
  it('writes packed RGB as planar normalised BGR at a place in a larger input, and reads a placement back out of a map', () => {
    const input = new Float32Array(3 * 4 * 3);
    // Two pixels (1×2): red, then blue, written at (2, 1) of a 4×3 input.
    writePlanar(
      Uint8Array.from([255, 0, 0, 0, 0, 255]),
      2,
      1,
      input,
      4,
      { x: 2, y: 1 },
      {
        scale: 1 / 255,
        mean: [0.5, 0.5, 0.5],
        std: [0.5, 0.5, 0.5],
      },
    );
    const at = (c: number, x: number, y: number) => input[c * 12 + y * 4 + x];
    expect([at(0, 2, 1), at(1, 2, 1), at(2, 2, 1)]).toEqual([-1, -1, 1]); // B, G, R of red
    expect([at(0, 3, 1), at(2, 3, 1)]).toEqual([1, -1]);
    expect(input.filter((v) => v !== 0)).toHaveLength(6);
    const map = Float32Array.from({ length: 12 }, (_, i) => i);
    expect([...subMap(map, 4, { x: 1, y: 1, width: 2, height: 2 })]).toEqual([5, 6, 9, 10]);
  });
});

describe('writeResampledPlanar', () => {
  const identity = { scale: 1, mean: [0, 0, 0] as const, std: [1, 1, 1] as const };
  const frame = (width: number, height: number, value: (x: number, y: number, c: number) => number) =>
    Uint8Array.from({ length: width * height * 3 }, (_, i) =>
      value(Math.floor(i / 3) % width, Math.floor(i / 3 / width), i % 3),
    );

  it('at scale 1 writes exactly what writePlanar writes for the cropped pixels', () => {
    const rgb = frame(6, 5, (x, y, c) => (x * 41 + y * 17 + c * 90) % 256);
    const region = { left: 1, top: 2, width: 4, height: 3 };
    const crop = Uint8Array.from(
      { length: 4 * 3 * 3 },
      (_, i) => rgb[((region.top + Math.floor(i / 12)) * 6 + region.left) * 3 + (i % 12)]!,
    );
    const norm = {
      scale: 1 / 255,
      mean: [0.485, 0.456, 0.406] as const,
      std: [0.229, 0.224, 0.225] as const,
    };
    const expected = new Float32Array(3 * 8 * 4);
    writePlanar(crop, 4, 3, expected, 8, { x: 2, y: 1 }, norm);
    const input = new Float32Array(3 * 8 * 4);
    writeResampledPlanar(rgb, 6, region, input, 8, { x: 2, y: 1, width: 4, height: 3 }, norm);
    input.forEach((v, i) => expect(v).toBeCloseTo(expected[i]!, 5));
  });

  it('enlarges linearly between pixel centres and keeps the edge pixels at the edges', () => {
    // A 2×1 row 0, 100 (grey) enlarged to 4×1: centres at 0.25, 0.75, 1.25 and 1.75 source px.
    const rgb = frame(2, 1, (x) => x * 100);
    const input = new Float32Array(3 * 4);
    writeResampledPlanar(
      rgb,
      2,
      { left: 0, top: 0, width: 2, height: 1 },
      input,
      4,
      { x: 0, y: 0, width: 4, height: 1 },
      identity,
    );
    expect([...input.subarray(0, 4)].map((v) => Math.round(v * 1000) / 1000)).toEqual([0, 25, 75, 100]);
  });

  it('shrinks with every source pixel counted: a flat region stays flat and a stripe pattern averages out', () => {
    const flat = frame(9, 9, (_x, _y, c) => [10, 120, 250][c]!);
    const small = new Float32Array(3 * 3 * 3);
    writeResampledPlanar(
      flat,
      9,
      { left: 0, top: 0, width: 9, height: 9 },
      small,
      3,
      { x: 0, y: 0, width: 3, height: 3 },
      identity,
    );
    // Planar BGR of (10, 120, 250).
    for (let i = 0; i < 9; i++)
      expect([small[i], small[9 + i], small[18 + i]].map((v) => Math.round(v!))).toEqual([250, 120, 10]);
    // Alternating columns 0 / 200 shrunk 4× come out near their mean, not at one of the stripes.
    const stripes = frame(16, 4, (x) => (x % 2) * 200);
    const out = new Float32Array(3 * 4);
    writeResampledPlanar(
      stripes,
      16,
      { left: 0, top: 0, width: 16, height: 4 },
      out,
      4,
      { x: 0, y: 0, width: 4, height: 1 },
      identity,
    );
    for (const v of out) expect(Math.abs(v - 100)).toBeLessThan(15);
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

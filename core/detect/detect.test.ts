import { ONTOLOGY_SEED } from '../ontology';
import { COCO_CLASSES, COCO_TO_ONTOLOGY, mapCocoDetections } from './coco-ontology';
import { decodeYolox, letterbox, toFrame, YOLOX_PAD_VALUE, yoloxAnchorCount, yoloxInput } from './yolox';

const NC = 80;
const S = 416;

/** A raw head with every anchor silent except the ones given (anchor index → values). */
function head(
  set: Record<
    number,
    { dx: number; dy: number; lw: number; lh: number; obj: number; cls: Record<number, number> }
  >,
): Float32Array {
  const raw = new Float32Array(yoloxAnchorCount(S) * (5 + NC));
  for (const [a, v] of Object.entries(set)) {
    const o = Number(a) * (5 + NC);
    raw.set([v.dx, v.dy, v.lw, v.lh, v.obj], o);
    for (const [c, s] of Object.entries(v.cls)) raw[o + 5 + Number(c)] = s;
  }
  return raw;
}

describe('YOLOX letterbox and input', () => {
  it('scales by the longer side and keeps the aspect', () => {
    const lb = letterbox(1280, 720, S);
    expect(lb.scale).toBeCloseTo(416 / 1280);
    expect([lb.scaledWidth, lb.scaledHeight]).toEqual([416, 234]);
    const tall = letterbox(810, 1080, S);
    expect([tall.scaledWidth, tall.scaledHeight]).toEqual([312, 416]);
  });

  it('lays the frame out as planar BGR 0–255 at the top left with 114 padding', () => {
    const lb = letterbox(4, 2, 4); // scale 1, scaled 4×2 in a 4×4 input
    const rgb = new Uint8Array(4 * 2 * 3);
    rgb.set([10, 20, 30], 0); // pixel (0,0): R10 G20 B30
    rgb.set([200, 150, 100], (1 * 4 + 3) * 3); // pixel (3,1)
    const t = yoloxInput(rgb, lb);
    const plane = 16;
    expect([t[0], t[plane], t[2 * plane]]).toEqual([30, 20, 10]);
    expect([t[7], t[plane + 7], t[2 * plane + 7]]).toEqual([100, 150, 200]);
    expect(t[8]).toBe(YOLOX_PAD_VALUE); // row 2: padding
    expect(t[2 * plane + 15]).toBe(YOLOX_PAD_VALUE);
    expect(() => yoloxInput(new Uint8Array(5), lb)).toThrow(/expected 4×2×3/);
  });
});

describe('YOLOX decode', () => {
  const lb = letterbox(1280, 720, S);

  it('decodes each stride from its own grid, scores by objectness × class and maps back to the frame', () => {
    // stride 8 grid is 52×52: anchor 52*10 + 20 is row 10, col 20.
    const s8 = 52 * 10 + 20;
    // stride 32 grid starts after 52² + 26² anchors; its cell (row 3, col 5).
    const s32 = 52 * 52 + 26 * 26 + 13 * 3 + 5;
    const raw = head({
      [s8]: { dx: 0.5, dy: 0.5, lw: Math.log(4), lh: Math.log(2), obj: 0.9, cls: { 2: 0.8 } },
      [s32]: { dx: 0, dy: 0, lw: 0, lh: 0, obj: 0.9, cls: { 0: 0.9 } },
    });
    const boxes = decodeYolox(raw, lb, NC, { minScore: 0.25, nmsIou: 0.45 });
    expect(boxes).toHaveLength(2);
    const person = boxes.find((b) => b.classIndex === 0)!;
    const car = boxes.find((b) => b.classIndex === 2)!;
    expect(person.score).toBeCloseTo(0.81);
    expect(car.score).toBeCloseTo(0.72);
    // car: centre ((20.5)·8, (10.5)·8) = (164, 84), size (32, 16) in input pixels; ×1280/416 in the frame
    const k = 1280 / 416;
    expect(car.box[0]).toBeCloseTo((164 - 16) * k, 3);
    expect(car.box[1]).toBeCloseTo((84 - 8) * k, 3);
    expect(car.box[2]).toBeCloseTo((164 + 16) * k, 3);
    expect(car.box[3]).toBeCloseTo((84 + 8) * k, 3);
    // person: centre (5·32, 3·32) = (160, 96), size 32×32
    expect(person.box[0]).toBeCloseTo(144 * k, 3);
    expect(person.box[3]).toBeCloseTo(112 * k, 3);
  });

  it('suppresses overlaps within a class but not across classes, and drops weak anchors', () => {
    const a = 52 * 10 + 20;
    const raw = head({
      [a]: { dx: 0, dy: 0, lw: Math.log(4), lh: Math.log(4), obj: 0.9, cls: { 2: 0.9 } },
      [a + 1]: { dx: -0.2, dy: 0, lw: Math.log(4), lh: Math.log(4), obj: 0.9, cls: { 2: 0.7 } }, // same car, weaker
      [a + 2]: { dx: -1.5, dy: 0, lw: Math.log(4), lh: Math.log(4), obj: 0.9, cls: { 7: 0.6 } }, // a truck on it
      [a + 3]: { dx: 0, dy: 0, lw: 0, lh: 0, obj: 0.2, cls: { 0: 0.9 } }, // below min score
    });
    const boxes = decodeYolox(raw, lb, NC, { minScore: 0.25, nmsIou: 0.45 });
    expect(boxes.map((b) => b.classIndex).sort()).toEqual([2, 7]);
    expect(boxes.find((b) => b.classIndex === 2)!.score).toBeCloseTo(0.81);
  });

  it('clips to the frame and refuses a head of the wrong size', () => {
    const clipped = toFrame({ box: [-10, 5, 500, 300], score: 1 }, lb);
    expect(clipped.box[0]).toBe(0);
    expect(clipped.box[2]).toBe(1280);
    expect(clipped.box[3]).toBe(720);
    expect(() => decodeYolox(new Float32Array(10), lb, NC, { minScore: 0.3, nmsIou: 0.45 })).toThrow(
      /3549×85/,
    );
  });

  it('maps back by the scale the resize applied on each axis: the scaled edges are the frame edges', () => {
    const odd = letterbox(1000, 700, S); // 416 × round(291.2) = 291: the y scale is 291/700, not 416/1000
    expect([odd.scaledWidth, odd.scaledHeight]).toEqual([416, 291]);
    const edges = toFrame({ box: [0, 0, 416, 291], score: 1 }, odd);
    expect(edges.box).toEqual([0, 0, 1000, 700]);
    const mid = toFrame({ box: [208, 145.5, 208, 145.5], score: 1 }, odd);
    expect(mid.box[0]).toBeCloseTo(500, 9);
    expect(mid.box[1]).toBeCloseTo(350, 9);
  });
});

describe('COCO → ontology', () => {
  it('maps onto classes the ontology has', () => {
    const names = new Set(ONTOLOGY_SEED.map((c) => c.name));
    for (const target of Object.values(COCO_TO_ONTOLOGY)) expect(names).toContain(target);
    expect(COCO_CLASSES).toHaveLength(80);
    expect(COCO_TO_ONTOLOGY.car).toBe('car');
    expect(COCO_TO_ONTOLOGY['stop sign']).toBe('traffic_sign');
  });

  it('drops and counts what the ontology has no class for', () => {
    const r = mapCocoDetections([
      { classIndex: 2 },
      { classIndex: 41 },
      { classIndex: 41 },
      { classIndex: 5 },
      { classIndex: 63 },
    ]);
    expect(r.mapped.map((m) => m.className)).toEqual(['car', 'bus']);
    expect(r.dropped).toEqual({ cup: 2, laptop: 1 });
    expect(() => mapCocoDetections([{ classIndex: 80 }])).toThrow(/outside/);
  });
});

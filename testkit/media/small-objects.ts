import sharp, { type OverlayOptions } from 'sharp';
import type { Box } from '../../core/geometry';
import { skimagePhoto } from './photos';
import { busPhoto } from './vehicles';

/**
 * Wide road frames (1242×375, the shape of a KITTI drive) made of real photographs, with vehicles
 * and pedestrians pasted in at measured heights: boxes known by construction. The background is
 * the street of `bus.jpg` — its building fronts above the horizon, its pavement below — and the
 * objects are hand-boxed crops of real photographs: the bus and the two pedestrians of `bus.jpg`,
 * the motorcycle of python3-skimage. Each crop is its box, so the pasted rectangle is the truth.
 *
 * Objects stand on the ground as a level camera 1.65 m up (KITTI's) sees it: one h px tall whose
 * real height is H m has its foot h × 1.65 / H below the horizon, so the small (far) ones gather
 * near the horizon and the near ones reach down the frame, as on a road.
 *
 * The photographs hold real objects besides the pasted ones — the people standing in front of the
 * bus, a bicycle on a balcony of the façade — boxed by hand and carried as `incidental`: a
 * detection of one is right, not a false positive, but they are not in recall (cut off by the
 * crop, or part of the scenery).
 */
export interface LabelledBox {
  className: string;
  box: Box;
}

export interface SmallObject extends LabelledBox {
  className: 'bus' | 'motorcycle' | 'person';
  /** Height in frame pixels, as pasted. */
  heightPx: number;
}

export interface SmallObjectFrame {
  jpeg: Buffer;
  width: number;
  height: number;
  /** Where the horizon lies (frame px): the façade meets the pavement there. */
  horizon: number;
  objects: SmallObject[];
  /** Real objects of the photographs, boxed by hand, in frame pixels. */
  incidental: LabelledBox[];
}

interface Source {
  className: SmallObject['className'];
  file: () => string;
  /** The object's hand-drawn box in the source photograph. */
  crop: { left: number; top: number; width: number; height: number };
  /** Its real height (m), which places it on the ground. */
  metres: number;
  /** Other real objects inside the crop, boxed by hand in the photograph's pixels. */
  inside: LabelledBox[];
}

const SOURCES: Source[] = [
  {
    className: 'bus',
    file: busPhoto,
    crop: { left: 0, top: 232, width: 806, height: 506 },
    metres: 2.9,
    // The four people in front of the bus, cut off at the crop's bottom edge.
    inside: [
      { className: 'person', box: [55, 398, 205, 738] },
      { className: 'person', box: [225, 405, 343, 738] },
      { className: 'person', box: [718, 395, 806, 738] },
      { className: 'person', box: [0, 555, 52, 738] },
    ],
  },
  {
    className: 'motorcycle',
    file: () => skimagePhoto('motorcycle_left.png'),
    crop: { left: 100, top: 70, width: 600, height: 380 },
    metres: 1.15,
    inside: [],
  },
  {
    className: 'person',
    file: busPhoto,
    crop: { left: 52, top: 398, width: 193, height: 504 },
    metres: 1.75,
    inside: [],
  },
  {
    className: 'person',
    file: busPhoto,
    crop: { left: 222, top: 405, width: 123, height: 455 },
    metres: 1.75,
    inside: [],
  },
];

/** The camera's height above the road (m), KITTI's. */
const CAMERA_METRES = 1.65;

/** The background strips of bus.jpg (810×1080): building fronts above the bus, pavement below the people. */
const FACADE = { left: 0, top: 0, width: 810, height: 120 };
const PAVEMENT = { left: 0, top: 950, width: 810, height: 130 };
/** The bicycle on the balcony at the façade's right, boxed by hand in bus.jpg. */
const BALCONY_BICYCLE: Box = [670, 20, 757, 90];
/** Where the façade meets the pavement, as a share of the frame's height (KITTI's horizon: 0.46). */
const HORIZON = 0.48;

const width_ = (s: Source, h: number): number => Math.max(1, Math.round((s.crop.width * h) / s.crop.height));

export const WIDE = { width: 1242, height: 375 } as const;

async function background(width: number, height: number, horizon: number, mirrored: boolean) {
  const strip = (region: typeof FACADE, h: number) =>
    sharp(busPhoto())
      .extract(region)
      .resize(width, h, { fit: 'fill' })
      .flop(mirrored)
      .removeAlpha()
      .toBuffer();
  const [facade, pavement] = await Promise.all([strip(FACADE, horizon), strip(PAVEMENT, height - horizon)]);
  const sx = width / FACADE.width;
  const sy = horizon / FACADE.height;
  const [x1, y1, x2, y2] = BALCONY_BICYCLE;
  const bicycle: Box = mirrored
    ? [width - x2 * sx, y1 * sy, width - x1 * sx, y2 * sy]
    : [x1 * sx, y1 * sy, x2 * sx, y2 * sy];
  const png = await sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .composite([
      { input: facade, left: 0, top: 0 },
      { input: pavement, left: 0, top: horizon },
    ])
    .png()
    .toBuffer();
  return { png, incidental: [{ className: 'bicycle', box: bicycle }] };
}

/** What frames to make: heights of the far row, and of the near objects after it. */
export interface SmallObjectScene {
  /** Heights of the near objects, one source each in turn, at the frame's right end (none). */
  near?: readonly number[];
  size?: { width: number; height: number };
}

/**
 * `count` frames of `width`×`height`; frame i carries every source at each height of `heights`,
 * in a row left to right, shifted by frame so objects meet tile edges at different places, and
 * the `near` objects (one source each, in turn) from the right edge leftwards where the row left
 * room. The camera pitches a little from frame to frame (the ground moves ±6 px); frames alternate
 * the background's mirror image.
 */
export async function smallObjectFrames(
  count: number,
  heights: readonly number[],
  scene: SmallObjectScene = {},
): Promise<SmallObjectFrame[]> {
  const { width, height } = scene.size ?? WIDE;
  const horizon = Math.round(height * HORIZON);
  const frames: SmallObjectFrame[] = [];
  const crops = new Map<string, Buffer>();
  const crop = async (s: Source, h: number) => {
    const key = `${SOURCES.indexOf(s)}:${h}`;
    if (!crops.has(key))
      crops.set(
        key,
        await sharp(s.file())
          .extract(s.crop)
          .resize(width_(s, h), h, { fit: 'fill' })
          .removeAlpha()
          .toBuffer(),
      );
    return crops.get(key)!;
  };
  for (let i = 0; i < count; i++) {
    const base = await background(width, height, horizon, i % 2 === 1);
    const layers: OverlayOptions[] = [];
    const objects: SmallObject[] = [];
    const incidental = [...base.incidental];
    const pitch = ((i % 3) - 1) * 6;
    const paste = async (s: Source, h: number, x: number) => {
      const w = width_(s, h);
      const top = Math.min(height, horizon + pitch + Math.round((h * CAMERA_METRES) / s.metres)) - h;
      layers.push({ input: await crop(s, h), left: x, top });
      objects.push({ className: s.className, box: [x, top, x + w, top + h], heightPx: h });
      const k = h / s.crop.height;
      for (const o of s.inside) {
        const [x1, y1, x2, y2] = o.box;
        const at = (v: number, from: number, off: number) => off + (v - from) * k;
        incidental.push({
          className: o.className,
          box: [
            at(x1, s.crop.left, x),
            at(y1, s.crop.top, top),
            at(x2, s.crop.left, x),
            at(y2, s.crop.top, top),
          ],
        });
      }
    };
    let x = 8 + ((i * 37) % 60);
    row: for (const h of heights)
      for (const s of SOURCES) {
        const w = width_(s, h);
        if (x + w > width - 4) break row;
        await paste(s, h, x);
        x += w + Math.max(8, Math.round(h / 2));
      }
    let right = width - 4;
    for (const [k, h] of (scene.near ?? []).entries()) {
      const s = SOURCES[(i + k) % SOURCES.length]!;
      const w = width_(s, h);
      if (right - w < x) break;
      right -= w;
      await paste(s, h, right);
      right -= Math.max(8, Math.round(h / 4));
    }
    const jpeg = await sharp(base.png).composite(layers).jpeg({ quality: 92 }).toBuffer();
    frames.push({ jpeg, width, height, horizon, objects, incidental });
  }
  return frames;
}

/** A detection as scored: class and box in frame pixels. */
export interface ScoredDetection {
  className: string;
  box: Box;
}

export interface SizeBand {
  /** Heights [min, max) in frame pixels. */
  min: number;
  max: number;
  objects: number;
  found: number;
  recall: number;
  /** The same by class. */
  byClass: Record<string, { objects: number; found: number }>;
}

export interface SmallObjectScore {
  bands: SizeBand[];
  /** Pasted objects whose height falls in one of the bands, together. */
  recall: number;
  /** Share of the road-user detections that are right: same class as a labelled object (pasted or incidental), IoU ≥ 0.5, one to one. */
  precision: number;
  detections: number;
  /** The wrong ones, for the record. */
  falsePositives: Array<ScoredDetection & { frame: number }>;
}

/**
 * Classes precision is counted over: the road users the ontology has. A bus called a truck is a
 * false positive; a bench or a potted plant found in the photographs is not judged (nobody
 * labelled the scenery's furniture).
 */
export const ROAD_USERS: ReadonlySet<string> = new Set([
  'person',
  'bicycle',
  'car',
  'motorcycle',
  'bus',
  'truck',
  'train',
]);

const area = (x: Box) => (x[2] - x[0]) * (x[3] - x[1]);
const overlap = (a: Box, b: Box): number =>
  Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0])) *
  Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
const iou = (a: Box, b: Box): number => overlap(a, b) / (area(a) + area(b) - overlap(a, b));
/** Share of box a inside box b. */
const covered = (a: Box, b: Box): number => overlap(a, b) / area(a);

/**
 * Recall by height band (and class) and precision of one set of detections per frame. Each
 * labelled box, pasted objects first, takes the unused detection of its class that overlaps it
 * most (IoU ≥ 0.5); a road-user detection left over is a false positive.
 */
export function scoreSmallObjects(
  frames: readonly SmallObjectFrame[],
  detections: ReadonlyArray<readonly ScoredDetection[]>,
  bands: ReadonlyArray<[number, number]>,
): SmallObjectScore {
  const found: Array<{ o: SmallObject; hit: boolean }> = [];
  const falsePositives: SmallObjectScore['falsePositives'] = [];
  let dets = 0;
  let ignored = 0;
  frames.forEach((f, frame) => {
    const mine = (detections[frame] ?? []).filter((d) => ROAD_USERS.has(d.className));
    dets += mine.length;
    const used = new Set<number>();
    const match = (o: LabelledBox): boolean => {
      let best = -1;
      let bestIou = 0.5;
      mine.forEach((d, j) => {
        const v = d.className === o.className && !used.has(j) ? iou(d.box, o.box) : 0;
        if (v >= bestIou) [best, bestIou] = [j, v];
      });
      if (best >= 0) used.add(best);
      return best >= 0;
    };
    for (const o of f.objects) found.push({ o, hit: match(o) });
    for (const o of f.incidental) match(o);
    mine.forEach((d, j) => {
      if (used.has(j)) return;
      // Inside a real object nobody pasted (a person in front of the pasted bus), neither right nor wrong.
      if (f.incidental.some((o) => o.className === d.className && covered(d.box, o.box) >= 0.5)) ignored++;
      else falsePositives.push({ frame, className: d.className, box: d.box });
    });
  });
  const inBands = found.filter((x) => bands.some(([min, max]) => x.o.heightPx >= min && x.o.heightPx < max));
  return {
    bands: bands.map(([min, max]) => {
      const inBand = found.filter((x) => x.o.heightPx >= min && x.o.heightPx < max);
      const byClass: SizeBand['byClass'] = {};
      for (const { o, hit } of inBand) {
        const c = (byClass[o.className] ??= { objects: 0, found: 0 });
        c.objects++;
        if (hit) c.found++;
      }
      const hits = inBand.filter((x) => x.hit).length;
      return {
        min,
        max,
        objects: inBand.length,
        found: hits,
        recall: inBand.length ? hits / inBand.length : 0,
        byClass,
      };
    }),
    recall: inBands.length ? inBands.filter((x) => x.hit).length / inBands.length : 0,
    precision: dets - ignored ? (dets - ignored - falsePositives.length) / (dets - ignored) : 1,
    detections: dets - ignored,
    falsePositives,
  };
}

import sharp, { type OverlayOptions } from 'sharp';
import type { Box } from '../../core/geometry';
import { skimagePhoto } from './photos';
import { busPhoto } from './vehicles';

/**
 * Wide road frames (1242×375, the shape of a KITTI drive) made of real photographs, with small
 * vehicles and pedestrians pasted in at measured heights: boxes known by construction. The
 * background is the street of `bus.jpg` — its building fronts above, its empty pavement below —
 * and the objects are hand-boxed crops of real photographs: the bus and the two pedestrians of
 * `bus.jpg`, the motorcycle of python3-skimage. Each crop is its box, so the pasted rectangle is the truth.
 */
export interface SmallObject {
  className: 'bus' | 'motorcycle' | 'person';
  box: Box;
  /** Height in frame pixels, as pasted. */
  heightPx: number;
}

export interface SmallObjectFrame {
  jpeg: Buffer;
  width: number;
  height: number;
  objects: SmallObject[];
}

interface Source {
  className: SmallObject['className'];
  file: () => string;
  /** The object's hand-drawn box in the source photograph. */
  crop: { left: number; top: number; width: number; height: number };
}

const SOURCES: Source[] = [
  { className: 'bus', file: busPhoto, crop: { left: 0, top: 232, width: 806, height: 506 } },
  {
    className: 'motorcycle',
    file: () => skimagePhoto('motorcycle_left.png'),
    crop: { left: 100, top: 70, width: 600, height: 380 },
  },
  { className: 'person', file: busPhoto, crop: { left: 52, top: 398, width: 193, height: 504 } },
  { className: 'person', file: busPhoto, crop: { left: 222, top: 405, width: 123, height: 455 } },
];

/** The background strips of bus.jpg (810×1080): building fronts above the bus, pavement below the people. */
const FACADE = { left: 0, top: 0, width: 810, height: 120 };
const PAVEMENT = { left: 0, top: 950, width: 810, height: 130 };

const width_ = (s: Source, h: number): number => Math.max(1, Math.round((s.crop.width * h) / s.crop.height));

export const WIDE = { width: 1242, height: 375 } as const;

async function background(width: number, height: number, mirrored: boolean): Promise<Buffer> {
  const top = Math.round(height * 0.48);
  const strip = (region: typeof FACADE, h: number) =>
    sharp(busPhoto())
      .extract(region)
      .resize(width, h, { fit: 'fill' })
      .flop(mirrored)
      .removeAlpha()
      .toBuffer();
  const [facade, pavement] = await Promise.all([strip(FACADE, top), strip(PAVEMENT, height - top)]);
  return sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .composite([
      { input: facade, left: 0, top: 0 },
      { input: pavement, left: 0, top },
    ])
    .png()
    .toBuffer();
}

/**
 * `count` frames of `width`×`height`; frame i carries every source at each height of `heights`,
 * in a row along the pavement, left to right, shifted by frame so objects meet tile edges at
 * different places. Frames alternate the background's mirror image.
 */
export async function smallObjectFrames(
  count: number,
  heights: readonly number[],
  size: { width: number; height: number } = WIDE,
): Promise<SmallObjectFrame[]> {
  const { width, height } = size;
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
    const base = await background(width, height, i % 2 === 1);
    const layers: OverlayOptions[] = [];
    const objects: SmallObject[] = [];
    // Objects stand on a line just below the pavement's edge, with a gap of their own height between them.
    let x = 8 + ((i * 37) % 60);
    const ground = Math.round(height * 0.62) + (i % 3) * 20;
    for (const h of heights)
      for (const s of SOURCES) {
        const w = width_(s, h);
        if (x + w > width - 4) break;
        const top = ground - h;
        layers.push({ input: await crop(s, h), left: x, top });
        objects.push({ className: s.className, box: [x, top, x + w, top + h], heightPx: h });
        x += w + Math.max(12, h);
      }
    const jpeg = await sharp(base).composite(layers).jpeg({ quality: 92 }).toBuffer();
    frames.push({ jpeg, width, height, objects });
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
}

export interface SmallObjectScore {
  bands: SizeBand[];
  /** Objects ≥ 16 px tall, together. */
  recall16: number;
  /** Share of the detections that match an object (same class, IoU ≥ 0.5): every pasted object is labelled, the background has none of these classes. */
  precision: number;
  detections: number;
}

const iou = (a: Box, b: Box): number => {
  const ix = Math.max(0, Math.min(a[2], b[2]) - Math.max(a[0], b[0]));
  const iy = Math.max(0, Math.min(a[3], b[3]) - Math.max(a[1], b[1]));
  const area = (x: Box) => (x[2] - x[0]) * (x[3] - x[1]);
  return (ix * iy) / (area(a) + area(b) - ix * iy);
};

/**
 * Recall by height band and precision of one set of detections per frame, matched greedily one to
 * one (same class, IoU ≥ 0.5). Detections of classes no pasted object has are left out of precision:
 * the background photograph is real and may hold what the model rightly sees (a plant, a sign).
 */
export function scoreSmallObjects(
  frames: readonly SmallObjectFrame[],
  detections: ReadonlyArray<readonly ScoredDetection[]>,
  bands: ReadonlyArray<[number, number]>,
): SmallObjectScore {
  const classes = new Set(SOURCES.map((s) => s.className as string));
  const found: Array<{ heightPx: number; hit: boolean }> = [];
  let dets = 0;
  let matched = 0;
  frames.forEach((f, i) => {
    const mine = (detections[i] ?? []).filter((d) => classes.has(d.className));
    dets += mine.length;
    const used = new Set<number>();
    for (const o of f.objects) {
      let best = -1;
      let bestIou = 0.5;
      mine.forEach((d, j) => {
        const v = d.className === o.className && !used.has(j) ? iou(d.box, o.box) : 0;
        if (v >= bestIou) [best, bestIou] = [j, v];
      });
      if (best >= 0) used.add(best);
      found.push({ heightPx: o.heightPx, hit: best >= 0 });
    }
    matched += used.size;
  });
  const share = (xs: typeof found) => (xs.length ? xs.filter((x) => x.hit).length / xs.length : 0);
  return {
    bands: bands.map(([min, max]) => {
      const inBand = found.filter((x) => x.heightPx >= min && x.heightPx < max);
      return {
        min,
        max,
        objects: inBand.length,
        found: inBand.filter((x) => x.hit).length,
        recall: share(inBand),
      };
    }),
    recall16: share(found.filter((x) => x.heightPx >= 16)),
    precision: dets ? matched / dets : 1,
    detections: dets,
  };
}

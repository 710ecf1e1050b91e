import sharp, { type OverlayOptions } from 'sharp';
import type { Box } from '../../core/geometry';
import { skimagePhoto } from './photos';
import { busPhoto } from './vehicles';

/**
 * Road frames for the PII pass in which every licence plate and face is known by construction.
 * Hand-boxed crops of real photographs — the city bus and the two pedestrians of `bus.jpg`, the
 * motorcycle of python3-skimage — stand on two ground lines (a far row, a near row) at measured
 * heights over a street made of `bus.jpg`'s building fronts and pavement. A plate (dark text on a
 * light plate with a border, as the PII tests render plate signs) is drawn onto every vehicle at a
 * plate's place and a plate's share of the vehicle's height; the two men's faces were marked by hand in
 * the photograph (forehead to chin), so their boxes follow from the placement, on the pedestrian
 * crops and on the bus's (they stand in front of it).
 */
export interface KnownRegion {
  box: Box;
  /** Height in frame pixels. */
  heightPx: number;
}

export interface PiiSceneObject {
  className: 'bus' | 'motorcycle' | 'person';
  box: Box;
}

export interface PiiScene {
  jpeg: Buffer;
  width: number;
  height: number;
  objects: PiiSceneObject[];
  plates: KnownRegion[];
  faces: KnownRegion[];
}

interface Source {
  className: PiiSceneObject['className'];
  file: () => string;
  /** The object's hand-drawn box in the source photograph. */
  crop: { left: number; top: number; width: number; height: number };
  /** Faces in the source photograph, inside the crop. */
  faces?: Box[];
  /**
   * Where its plate goes (vehicles): centre as shares of the box, and height as a share of the
   * box's height: a bus's 110–150 mm plate on its 3–3.5 m, a line of a motorcycle's two-line plate
   * (about 70 mm) on its 1.2 m.
   */
  plate?: { cx: number; cy: number; share: number };
}

/** The two men of bus.jpg, marked by hand; both stand in front of the bus and inside its box. */
const MEN: Box[] = [
  [114, 415, 156, 472],
  [265, 422, 310, 474],
];

const BUS: Source = {
  className: 'bus',
  file: busPhoto,
  crop: { left: 0, top: 232, width: 806, height: 506 },
  faces: MEN,
  // On the skirt between the wheels, below the "cero emisiones" lettering.
  plate: { cx: 0.6, cy: 0.87, share: 0.04 },
};
const MOTORCYCLE: Source = {
  className: 'motorcycle',
  file: () => skimagePhoto('motorcycle_left.png'),
  crop: { left: 100, top: 70, width: 600, height: 380 },
  // On the side cover under the seat.
  plate: { cx: 0.42, cy: 0.52, share: 0.06 },
};
const PEOPLE: Source[] = [
  {
    className: 'person',
    file: busPhoto,
    crop: { left: 52, top: 398, width: 193, height: 504 },
    faces: [MEN[0]!],
  },
  {
    className: 'person',
    file: busPhoto,
    crop: { left: 222, top: 405, width: 123, height: 455 },
    faces: [MEN[1]!],
  },
];

const PLATE_TEXT = ['LD71 0KR', 'B-XY 4821', 'MH12 DE1433', '7ABC123', 'KA 05 MH 2931', 'AB12 CDE'];

/** A plate sign `h` px high (its width follows the text), as an SVG. */
export function plateSvg(text: string, h: number): { svg: Buffer; width: number } {
  const width = Math.round(h * 0.62 * text.length + h * 0.8);
  const svg = `<svg width="${width}" height="${h}"><rect x="1" y="1" width="${width - 2}" height="${h - 2}" rx="${h / 8}" fill="#f2f2ea" stroke="#222" stroke-width="${Math.max(1, h / 14)}"/><text x="${width / 2}" y="${h * 0.76}" font-family="DejaVu Sans Mono" font-weight="bold" font-size="${h * 0.72}" text-anchor="middle" fill="#111">${text}</text></svg>`;
  return { svg: Buffer.from(svg), width };
}

/** Heights (frame px) per row, from the first frame's to the last's. */
const ROWS = [
  // Far row: standing on 42 % of the frame's height.
  {
    ground: 0.42,
    items: [
      { source: BUS, from: 150, to: 280 },
      { source: MOTORCYCLE, from: 110, to: 200 },
      { source: PEOPLE[0]!, from: 90, to: 170 },
      { source: PEOPLE[1]!, from: 110, to: 190 },
    ],
  },
  // Near row: standing on the bottom edge, below the far row's feet.
  {
    ground: 0.995,
    items: [
      { source: MOTORCYCLE, from: 260, to: 420 },
      { source: BUS, from: 340, to: 520 },
      { source: PEOPLE[0]!, from: 240, to: 420 },
    ],
  },
];

const scaleInto = (b: Box, crop: Source['crop'], left: number, top: number, k: number): Box => [
  left + (b[0] - crop.left) * k,
  top + (b[1] - crop.top) * k,
  left + (b[2] - crop.left) * k,
  top + (b[3] - crop.top) * k,
];

/** The street alone (no vehicle, no person), as PNG: `bus.jpg`'s building fronts over its pavement. */
export async function street(width: number, height: number): Promise<Buffer> {
  const split = Math.round(height * 0.4);
  const strip = (region: Source['crop'], h: number) =>
    sharp(busPhoto()).extract(region).resize(width, h, { fit: 'fill' }).removeAlpha().toBuffer();
  const [facade, pavement] = await Promise.all([
    strip({ left: 0, top: 0, width: 810, height: 120 }, split),
    strip({ left: 0, top: 950, width: 810, height: 130 }, height - split),
  ]);
  return sharp({ create: { width, height, channels: 3, background: { r: 0, g: 0, b: 0 } } })
    .composite([
      { input: facade, left: 0, top: 0 },
      { input: pavement, left: 0, top: split },
    ])
    .png()
    .toBuffer();
}

/**
 * `count` frames of `width`×(9/16·width). Frame i puts every row's items at heights i/(count−1)
 * of the way from `from` to `to` (scaled with the width from 1920), left to right with gaps, so
 * across the frames each object and its plate or face appears at a spread of sizes.
 */
export async function piiScenes(count: number, width = 1920): Promise<PiiScene[]> {
  const height = Math.round((width * 9) / 16);
  const k = width / 1920;
  const base = await street(width, height);
  const scenes: PiiScene[] = [];
  for (let i = 0; i < count; i++) {
    const t = count > 1 ? i / (count - 1) : 0;
    const layers: OverlayOptions[] = [];
    const scene: Omit<PiiScene, 'jpeg'> = { width, height, objects: [], plates: [], faces: [] };
    for (const row of ROWS) {
      let x = Math.round(width * 0.01 + ((i * 53) % 20) * k);
      for (const { source, from, to } of row.items) {
        const h = Math.round((from + (to - from) * t) * k);
        const s = h / source.crop.height;
        const w = Math.round(source.crop.width * s);
        const top = Math.round(height * row.ground) - h;
        layers.push({
          input: await sharp(source.file())
            .extract(source.crop)
            .resize(w, h, { fit: 'fill' })
            .removeAlpha()
            .toBuffer(),
          left: x,
          top,
        });
        scene.objects.push({ className: source.className, box: [x, top, x + w, top + h] });
        for (const face of source.faces ?? []) {
          const box = scaleInto(face, source.crop, x, top, s);
          scene.faces.push({ box, heightPx: box[3] - box[1] });
        }
        if (source.plate) {
          const ph = Math.max(6, Math.round(h * source.plate.share));
          const text = PLATE_TEXT[(i + scene.plates.length) % PLATE_TEXT.length]!;
          const { svg, width: pw } = plateSvg(text, ph);
          const left = Math.round(x + w * source.plate.cx - pw / 2);
          const ptop = Math.round(top + h * source.plate.cy - ph / 2);
          layers.push({ input: svg, left, top: ptop });
          scene.plates.push({ box: [left, ptop, left + pw, ptop + ph], heightPx: ph });
        }
        x += w + Math.round(Math.max(24 * k, h * 0.15));
      }
    }
    const jpeg = await sharp(base).composite(layers).jpeg({ quality: 90 }).toBuffer();
    scenes.push({ ...scene, jpeg });
  }
  return scenes;
}

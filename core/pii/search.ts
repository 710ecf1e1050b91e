import { cropRegion, type Box, type FrameSize } from '../geometry';

/**
 * Where the PII pass looks on the closed-set detector's boxes (docs/pii.md "Search"): a plate is
 * on a vehicle and a small face on a person, so instead of the whole frame at one scale, the part
 * of each box where such a thing sits is cut out and scaled so that the smallest one a box of its
 * height usually carries reaches the size its detector resolves — far objects enlarged, near ones
 * shrunk. What a box would carry below `minPx` frame pixels is not looked for: nobody can be
 * identified from it at the frame's own resolution.
 */
export interface SearchRule {
  /** Height of the smallest usual plate or face as a share of the box's height. */
  share: number;
  /** The band of the box searched, from `from` to `to` of its height (0 is its top). */
  from: number;
  to: number;
}

/**
 * Licence plates: 110 mm (EU) to 150 mm (US) high on a car 1.4–1.8 m high, on a bus or truck of
 * 3–4 m, a motorcycle's (two lines of about 60 mm) on a 1.1–1.3 m box. Plates sit on bumpers,
 * boots, tailgates and rear mudguards: below the top third of the box (a quarter for motorcycles,
 * whose box holds the rider).
 */
export const PLATE_RULES: Readonly<Record<string, SearchRule>> = {
  car: { share: 0.06, from: 0.35, to: 1 },
  truck: { share: 0.035, from: 0.5, to: 1 },
  bus: { share: 0.035, from: 0.5, to: 1 },
  motorcycle: { share: 0.05, from: 0.25, to: 1 },
};

/**
 * Faces: forehead to chin is about a ninth of a standing person's height, and in the upper half
 * of the box also when the person sits or the frame cuts them off at the knees.
 */
export const FACE_RULES: Readonly<Record<string, SearchRule>> = {
  person: { share: 0.1, from: 0, to: 0.5 },
};

export interface SearchBox {
  box: Box;
  className: string;
}

/** A part of the frame searched on its own: whole pixels inside the frame, and its scale at the detector's input. */
export interface SearchCrop {
  left: number;
  top: number;
  width: number;
  height: number;
  scale: number;
}

export interface SearchOptions {
  /** Input height (px) the smallest expected plate or face is scaled to. */
  targetPx: number;
  /** Most a crop is enlarged. */
  maxUpscale: number;
  /** Plates or faces expected lower than this in frame pixels are not looked for. */
  minPx: number;
  /**
   * Scale at which a whole-frame pass already sees the frame: a box whose smallest expected face
   * it sees at `targetPx` or more is left to it.
   */
  coveredScale?: number;
}

/** Share of the band added on each side: the detector's boxes are not tight to the pixel. */
const MARGIN = 0.05;
/** Crops overlapping by this share of the smaller one are joined. */
const JOIN_SHARE = 0.6;

export function searchCrops(
  boxes: readonly SearchBox[],
  rules: Readonly<Record<string, SearchRule>>,
  frame: FrameSize,
  opts: SearchOptions,
): SearchCrop[] {
  const crops: SearchCrop[] = [];
  for (const { box, className } of boxes) {
    const rule = rules[className];
    if (!rule) continue;
    const h = box[3] - box[1];
    const expected = rule.share * h;
    if (expected < opts.minPx) continue;
    const needed = opts.targetPx / expected;
    if (opts.coveredScale !== undefined && needed <= opts.coveredScale) continue;
    const band: Box = [box[0], box[1] + rule.from * h, box[2], box[1] + rule.to * h];
    crops.push({ ...cropRegion(band, MARGIN, frame, frame), scale: Math.min(opts.maxUpscale, needed) });
  }
  return joinOverlapping(crops);
}

const right = (c: SearchCrop): number => c.left + c.width;
const bottom = (c: SearchCrop): number => c.top + c.height;

/**
 * Crops that mostly overlap — one object the detector named twice (a bus also as a truck), a
 * group of people — become one, their union at the larger scale, so that no part is searched twice.
 */
function joinOverlapping(crops: SearchCrop[]): SearchCrop[] {
  for (let i = 0; i < crops.length; i++) {
    for (let j = i + 1; j < crops.length; j++) {
      const a = crops[i]!;
      const b = crops[j]!;
      const ix = Math.min(right(a), right(b)) - Math.max(a.left, b.left);
      const iy = Math.min(bottom(a), bottom(b)) - Math.max(a.top, b.top);
      if (ix <= 0 || iy <= 0 || ix * iy < JOIN_SHARE * Math.min(a.width * a.height, b.width * b.height))
        continue;
      const left = Math.min(a.left, b.left);
      const top = Math.min(a.top, b.top);
      crops[i] = {
        left,
        top,
        width: Math.max(right(a), right(b)) - left,
        height: Math.max(bottom(a), bottom(b)) - top,
        scale: Math.max(a.scale, b.scale),
      };
      crops.splice(j, 1);
      // The joined crop may now overlap one already passed: look again from the start.
      i = -1;
      break;
    }
  }
  return crops;
}

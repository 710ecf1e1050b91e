import type { Box } from '../geometry';

/**
 * Colour/shape sign proposals: where a frame may hold a sign face nobody marked. European sign
 * faces are printed in a few saturated colours — red rims and discs (prohibitory, warning, stop,
 * yield), blue discs (mandatory), yellow diamonds (priority road) — that little else in a road
 * scene shares at a sign's size and shape. Pixels of those colours are grouped into connected
 * regions, and a region is a proposal when it is sign-sized, about as wide as tall, and fills its
 * box the way a rim, a disc, a triangle or a diamond does. The classifier's confidence floor then
 * decides; a proposal it does not recognise is dropped. The classifier is closed-set and confident on
 * many non-signs, so the shape test is strict: the region's silhouette (each row filled between
 * its outermost pixels, which closes a rim's hole) must match a circle, an upward or downward
 * triangle or a diamond stretched over its box, as blobs of red brick, tail lights or clothing rarely do.
 * Red and blue faces also carry white inside that silhouette — a rim's field, a disc's bar, arrow or
 * lettering — which a blue wheel hub or a red tail light does not.
 */
export type SignColour = 'red' | 'blue' | 'yellow';

export type SignShape = 'circle' | 'triangle_up' | 'triangle_down' | 'diamond';

export interface SignProposal {
  box: Box;
  colour: SignColour;
  shape: SignShape;
  /** Share of the box covered by the region's pixels. */
  fill: number;
}

export interface SignProposalRules {
  /** Smallest face side (px) worth classifying: GTSRB's smallest crops are about 15 px. */
  minSide: number;
  /** Largest face side as a share of the frame's height. */
  maxSideShare: number;
  /** Width ÷ height allowed (faces seen at an angle get narrower). */
  minAspect: number;
  maxAspect: number;
  /** A rim fills about 0.3 of its box, a triangle 0.5, a disc 0.79, an octagon 0.83. */
  minFill: number;
  maxFill: number;
  /** Intersection over union of the silhouette with the best-fitting face shape. */
  minShapeIou: number;
  /** Share of a red or blue silhouette that must be white (legend, field). */
  minWhite: number;
  maxProposals: number;
}

export const SIGN_PROPOSAL_RULES: SignProposalRules = {
  minSide: 14,
  maxSideShare: 0.25,
  minAspect: 0.5,
  maxAspect: 1.6,
  minFill: 0.2,
  maxFill: 0.95,
  minShapeIou: 0.8,
  minWhite: 0.05,
  maxProposals: 48,
};

const COLOURS: readonly SignColour[] = ['red', 'blue', 'yellow'];

/** Face shapes over the unit box (u right, v down); an octagon is a circle within a few per cent. */
const SHAPES: ReadonlyArray<[SignShape, (u: number, v: number) => boolean]> = [
  ['circle', (u, v) => (u - 0.5) ** 2 + (v - 0.5) ** 2 <= 0.25],
  ['triangle_up', (u, v) => Math.abs(u - 0.5) <= v / 2],
  ['triangle_down', (u, v) => Math.abs(u - 0.5) <= (1 - v) / 2],
  ['diamond', (u, v) => Math.abs(u - 0.5) + Math.abs(v - 0.5) <= 0.5],
];

/**
 * The best-fitting shape of a silhouette given as each row's outermost columns (box-relative,
 * `left[r] > right[r]` for an empty row) and its intersection over union with the silhouette.
 */
export function fitSignShape(
  left: Int32Array,
  right: Int32Array,
  w: number,
): { shape: SignShape; iou: number } {
  const h = left.length;
  let best: { shape: SignShape; iou: number } = { shape: 'circle', iou: 0 };
  for (const [shape, inside] of SHAPES) {
    let both = 0;
    let either = 0;
    for (let r = 0; r < h; r++) {
      const v = (r + 0.5) / h;
      for (let c = 0; c < w; c++) {
        const a = c >= left[r]! && c <= right[r]!;
        const b = inside((c + 0.5) / w, v);
        if (a && b) both++;
        if (a || b) either++;
      }
    }
    const iou = either ? both / either : 0;
    if (iou > best.iou) best = { shape, iou };
  }
  return best;
}

/** Hue in degrees, saturation and value in 0–1 (HSV of sRGB, no gamma). */
function colourOf(r: number, g: number, b: number): number {
  const max = Math.max(r, g, b);
  const min = Math.min(r, g, b);
  const chroma = max - min;
  // Dark or washed-out pixels have no reliable hue; sign paint is saturated and lit.
  if (max < 60 || chroma < 0.4 * max) return -1;
  let hue: number;
  if (max === r) hue = (60 * (g - b)) / chroma;
  else if (max === g) hue = 60 * ((b - r) / chroma + 2);
  else hue = 60 * ((r - g) / chroma + 4);
  if (hue < 0) hue += 360;
  if (hue >= 330 || hue < 15) return 0;
  if (hue >= 200 && hue < 250) return 1;
  if (hue >= 40 && hue < 65 && max >= 120) return 2;
  return -1;
}

/** Share of the silhouette's pixels that are white: bright and nearly without colour. */
function whiteShare(
  rgb: Uint8Array,
  width: number,
  x1: number,
  y1: number,
  left: Int32Array,
  right: Int32Array,
): number {
  let white = 0;
  let all = 0;
  for (let r = 0; r < left.length; r++)
    for (let c = left[r]!; c <= right[r]!; c++) {
      const p = ((y1 + r) * width + x1 + c) * 3;
      const max = Math.max(rgb[p]!, rgb[p + 1]!, rgb[p + 2]!);
      const min = Math.min(rgb[p]!, rgb[p + 1]!, rgb[p + 2]!);
      all++;
      if (max >= 140 && max - min < 0.25 * max) white++;
    }
  return all ? white / all : 0;
}

/**
 * Sign-face proposals on a packed RGB image, the most box-filling first. Regions are 8-connected
 * runs of one colour class; each region's box is tested against the rules.
 */
export function proposeSigns(
  rgb: Uint8Array,
  width: number,
  height: number,
  rules: SignProposalRules = SIGN_PROPOSAL_RULES,
): SignProposal[] {
  const n = width * height;
  const colour = new Int8Array(n);
  for (let i = 0, p = 0; i < n; i++, p += 3) colour[i] = colourOf(rgb[p]!, rgb[p + 1]!, rgb[p + 2]!);
  const seen = new Uint8Array(n);
  const stack = new Int32Array(n);
  const maxSide = rules.maxSideShare * height;
  const out: SignProposal[] = [];
  const members: number[] = [];
  for (let start = 0; start < n; start++) {
    const c = colour[start]!;
    if (c < 0 || seen[start]) continue;
    let top = 0;
    let count = 0;
    let x1 = width;
    let y1 = height;
    let x2 = -1;
    let y2 = -1;
    stack[top++] = start;
    seen[start] = 1;
    members.length = 0;
    while (top > 0) {
      const i = stack[--top]!;
      members.push(i);
      count++;
      const x = i % width;
      const y = (i - x) / width;
      if (x < x1) x1 = x;
      if (x > x2) x2 = x;
      if (y < y1) y1 = y;
      if (y > y2) y2 = y;
      for (let dy = -1; dy <= 1; dy++) {
        const ny = y + dy;
        if (ny < 0 || ny >= height) continue;
        for (let dx = -1; dx <= 1; dx++) {
          const nx = x + dx;
          if (nx < 0 || nx >= width) continue;
          const j = ny * width + nx;
          if (!seen[j] && colour[j] === c) {
            seen[j] = 1;
            stack[top++] = j;
          }
        }
      }
    }
    const w = x2 - x1 + 1;
    const h = y2 - y1 + 1;
    if (Math.min(w, h) < rules.minSide || Math.max(w, h) > maxSide) continue;
    const aspect = w / h;
    if (aspect < rules.minAspect || aspect > rules.maxAspect) continue;
    const fill = count / (w * h);
    if (fill < rules.minFill || fill > rules.maxFill) continue;
    const left = new Int32Array(h).fill(w);
    const right = new Int32Array(h).fill(-1);
    for (const i of members) {
      const r = Math.floor(i / width) - y1;
      const col = (i % width) - x1;
      if (col < left[r]!) left[r] = col;
      if (col > right[r]!) right[r] = col;
    }
    const { shape, iou } = fitSignShape(left, right, w);
    if (iou < rules.minShapeIou) continue;
    if (COLOURS[c] !== 'yellow' && whiteShare(rgb, width, x1, y1, left, right) < rules.minWhite) continue;
    out.push({ box: [x1, y1, x2 + 1, y2 + 1], colour: COLOURS[c]!, shape, fill });
  }
  return out.sort((a, b) => b.fill - a.fill).slice(0, rules.maxProposals);
}

import simplify from 'simplify-js';
import type { Box } from '../geometry';

/**
 * Masks from a semantic segmentation model run on one detection's box (docs/masks.md). The model
 * (DeepLab v3, PASCAL VOC) sees a square crop around the box with context, which it needs to tell
 * an object from its background; its per-pixel classes are read back into frame pixels, kept only
 * inside the box, and traced into polygon rings.
 */

/**
 * The VOC classes whose pixels make each ontology class's mask. VOC has no truck: DeepLab labels a
 * truck's cab and body `car` or `bus` depending on its build, so a truck's mask is both. A rider's
 * box holds the person and the vehicle under them; the rider is the person.
 */
export const SEGMENTABLE: Readonly<Record<string, readonly string[]>> = {
  person: ['person'],
  rider: ['person'],
  car: ['car'],
  bus: ['bus'],
  truck: ['car', 'bus'],
  bicycle: ['bicycle'],
  motorcycle: ['motorbike'],
};

export const isSegmentable = (className: string): boolean => Object.hasOwn(SEGMENTABLE, className);

/** Context around the box on each side, as a share of the box's longer side. */
export const CONTEXT = 0.25;
/** A mask covering less of its box than this is flagged `mask_low_coverage`. */
export const MIN_COVERAGE = 0.25;
/** Components smaller than this share of the mask's largest one are specks, not the object. */
const MIN_COMPONENT_SHARE = 0.05;

export interface Region {
  left: number;
  top: number;
  width: number;
  height: number;
}

/**
 * The square region the model sees for a box: the box's longer side plus CONTEXT on each side,
 * centred on the box, clipped to the frame (so at a frame edge it is no longer square).
 */
export function contextRegion(box: Box, frame: { width: number; height: number }): Region {
  const [x1, y1, x2, y2] = box;
  const side = Math.max(x2 - x1, y2 - y1) * (1 + 2 * CONTEXT);
  const cx = (x1 + x2) / 2;
  const cy = (y1 + y2) / 2;
  const left = Math.max(0, Math.floor(cx - side / 2));
  const top = Math.max(0, Math.floor(cy - side / 2));
  const right = Math.min(frame.width, Math.ceil(cx + side / 2));
  const bottom = Math.min(frame.height, Math.ceil(cy + side / 2));
  return { left, top, width: Math.max(1, right - left), height: Math.max(1, bottom - top) };
}

/** A binary mask on the model's grid: 1 where a pixel is the object. */
export interface GridMask {
  width: number;
  height: number;
  data: Uint8Array;
}

/**
 * The object's pixels: those whose best class (argmax of the NHWC logits) is one of `classes`,
 * and whose centre, mapped into the frame through `region`, lies inside the box.
 */
export function objectMask(
  logits: Float32Array,
  grid: { width: number; height: number; classes: number },
  wanted: readonly number[],
  region: Region,
  box: Box,
): GridMask {
  const { width, height, classes } = grid;
  const data = new Uint8Array(width * height);
  const sx = region.width / width;
  const sy = region.height / height;
  for (let v = 0; v < height; v++) {
    const y = region.top + (v + 0.5) * sy;
    if (y < box[1] || y > box[3]) continue;
    for (let u = 0; u < width; u++) {
      const x = region.left + (u + 0.5) * sx;
      if (x < box[0] || x > box[2]) continue;
      const at = (v * width + u) * classes;
      let best = 0;
      for (let c = 1; c < classes; c++) if (logits[at + c]! > logits[at + best]!) best = c;
      if (wanted.includes(best)) data[v * width + u] = 1;
    }
  }
  return { width, height, data };
}

/** Share of the box the mask covers, in frame pixels. */
export function coverage(mask: GridMask, region: Region, box: Box): number {
  let on = 0;
  for (const p of mask.data) on += p;
  const pixelArea = (region.width / mask.width) * (region.height / mask.height);
  const boxArea = Math.max(1e-9, (box[2] - box[0]) * (box[3] - box[1]));
  return Math.min(1, (on * pixelArea) / boxArea);
}

/** 8-connected components: a label per pixel (0 outside) and each component's size, by label − 1. */
function components(mask: GridMask): { labels: Int32Array; sizes: number[] } {
  const { width, height, data } = mask;
  const labels = new Int32Array(width * height);
  const sizes: number[] = [];
  const stack: number[] = [];
  for (let start = 0; start < data.length; start++) {
    if (!data[start] || labels[start]) continue;
    const label = sizes.length + 1;
    let size = 0;
    labels[start] = label;
    stack.push(start);
    while (stack.length) {
      const p = stack.pop()!;
      size++;
      const px = p % width;
      const py = (p - px) / width;
      for (let dy = -1; dy <= 1; dy++)
        for (let dx = -1; dx <= 1; dx++) {
          const nx = px + dx;
          const ny = py + dy;
          if (nx < 0 || ny < 0 || nx >= width || ny >= height) continue;
          const n = ny * width + nx;
          if (data[n] && !labels[n]) {
            labels[n] = label;
            stack.push(n);
          }
        }
    }
    sizes.push(size);
  }
  return { labels, sizes };
}

// Headings clockwise on a y-down grid: east, south, west, north.
const STEP = [
  [1, 0],
  [0, 1],
  [-1, 0],
  [0, -1],
] as const;
// For each heading, the pixels ahead of a corner on the right and on the left (offsets of their top-left corners).
const AHEAD_RIGHT = [
  [0, 0],
  [-1, 0],
  [-1, -1],
  [0, -1],
] as const;
const AHEAD_LEFT = [
  [0, -1],
  [0, 0],
  [-1, 0],
  [-1, -1],
] as const;

/**
 * The outer boundary of one component along pixel edges, clockwise, keeping the object on the
 * right: turn left where the pixel ahead-left is the object (so diagonal neighbours join, as in
 * the 8-connected labelling), go straight where only the one ahead-right is, else turn right.
 * Corners only: points where the heading changes.
 */
function traceOuter(labels: Int32Array, width: number, height: number, label: number, start: number) {
  const inside = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < width && y < height && labels[y * width + x] === label;
  const sx = start % width;
  const sy = (start - sx) / width;
  let x = sx;
  let y = sy;
  let d = 0;
  // The start corner touches one object pixel only, so the boundary passes it once: back there, the ring is closed.
  const ring: Array<{ x: number; y: number }> = [];
  do {
    const [lx, ly] = AHEAD_LEFT[d]!;
    const [rx, ry] = AHEAD_RIGHT[d]!;
    const next = inside(x + lx, y + ly) ? (d + 3) % 4 : inside(x + rx, y + ry) ? d : (d + 1) % 4;
    if (next !== d || ring.length === 0) ring.push({ x, y });
    d = next;
    x += STEP[d]![0];
    y += STEP[d]![1];
  } while (x !== sx || y !== sy);
  return ring;
}

/**
 * The mask's polygon rings in frame pixels, flat [x, y, x, y, …]: the outer boundary of each
 * component that is not a speck, simplified (Douglas–Peucker) to `tolerance` frame pixels. Holes
 * are not kept: a stored mask is a set of filled rings (docs/annotations.md).
 */
export function maskPolygons(mask: GridMask, region: Region, tolerance: number): number[][] {
  const { labels, sizes } = components(mask);
  const largest = Math.max(0, ...sizes);
  const sx = region.width / mask.width;
  const sy = region.height / mask.height;
  const rings: number[][] = [];
  const started = new Set<number>();
  for (let p = 0; p < labels.length; p++) {
    const label = labels[p]!;
    if (!label || started.has(label)) continue;
    started.add(label);
    if (sizes[label - 1]! < largest * MIN_COMPONENT_SHARE) continue;
    const ring = traceOuter(labels, mask.width, mask.height, label, p).map((c) => ({
      x: region.left + c.x * sx,
      y: region.top + c.y * sy,
    }));
    const kept = simplify(ring, tolerance, true);
    if (kept.length >= 3) rings.push(kept.flatMap((c) => [round2(c.x), round2(c.y)]));
  }
  return rings;
}

const round2 = (v: number) => Math.round(v * 100) / 100;

/**
 * The box a point prompt is segmented in: a square of half the frame's shorter side centred on
 * the point, clipped to the frame (the object around the point is then the ring holding it).
 */
export function pointWindow(point: readonly [number, number], frame: { width: number; height: number }): Box {
  const half = Math.min(frame.width, frame.height) / 4;
  return [
    Math.max(0, point[0] - half),
    Math.max(0, point[1] - half),
    Math.min(frame.width, point[0] + half),
    Math.min(frame.height, point[1] + half),
  ];
}

/** Simplification tolerance for a box: 1% of its diagonal, at least half a frame pixel. */
export const toleranceFor = (box: Box): number =>
  Math.max(0.5, 0.01 * Math.hypot(box[2] - box[0], box[3] - box[1]));

/** What one segmentation gives an object: its rings, how much of the box they cover, and the flag when too little. */
export interface SegmentedMask {
  polygons: number[][];
  coverage: number;
  qualityFlags: string[];
}

export function segmentedMask(mask: GridMask, region: Region, box: Box): SegmentedMask {
  const cov = coverage(mask, region, box);
  return {
    polygons: maskPolygons(mask, region, toleranceFor(box)),
    coverage: Math.round(cov * 1000) / 1000,
    qualityFlags: cov < MIN_COVERAGE ? ['mask_low_coverage'] : [],
  };
}

/** Whether a point is inside any of the rings (even–odd within each ring). */
export function insideRings(rings: readonly number[][], x: number, y: number): boolean {
  return rings.some((r) => {
    let inside = false;
    for (let i = 0, j = r.length - 2; i < r.length; j = i, i += 2) {
      const [xi, yi, xj, yj] = [r[i]!, r[i + 1]!, r[j]!, r[j + 1]!];
      if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
    }
    return inside;
  });
}

/**
 * Mask IoU of two sets of rings in frame pixels, sampled at pixel centres over the union of their
 * bounding boxes (the measure of docs/masks.md).
 */
export function maskIou(a: readonly number[][], b: readonly number[][]): number {
  const xs = [...a, ...b].flatMap((r) => r.filter((_, i) => i % 2 === 0));
  const ys = [...a, ...b].flatMap((r) => r.filter((_, i) => i % 2 === 1));
  if (!xs.length) return 0;
  let inter = 0;
  let union = 0;
  for (let y = Math.floor(Math.min(...ys)); y < Math.ceil(Math.max(...ys)); y++)
    for (let x = Math.floor(Math.min(...xs)); x < Math.ceil(Math.max(...xs)); x++) {
      const ina = insideRings(a, x + 0.5, y + 0.5);
      const inb = insideRings(b, x + 0.5, y + 0.5);
      if (ina && inb) inter++;
      if (ina || inb) union++;
    }
  return union ? inter / union : 0;
}

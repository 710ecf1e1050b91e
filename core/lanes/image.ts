import type { LaneColour } from './vocabulary';

/**
 * Painted markings in a frame's pixels, row by row: a marking pixel is brighter than the road
 * around it in its row, and a marking is a run of such pixels no wider than a painted line can be.
 * Every lane algorithm (propose, propagate, classify) reads the frame through this one view.
 */

/** Packed RGB, row-major, `width`×`height`×3 bytes. */
export interface RgbImage {
  width: number;
  height: number;
  rgb: Uint8Array;
}

export interface MarkingParams {
  /** Width of the row windows left and right of a pixel whose means are the local road brightness, as a share of the image width. */
  windowFrac: number;
  /** A marking pixel is at least this much brighter (luma, 0–255) than the local road... */
  minContrast: number;
  /** ...and at least this share of the local road brightness brighter. */
  relContrast: number;
  /** Runs wider than this share of the image width are not paint (a car, the sky, a lit wall). */
  maxWidthFrac: number;
  /** Two runs of one row belong to one (double) marking when their centres are this many run widths apart or less. */
  pairFactor: number;
}

export const DEFAULT_MARKING: MarkingParams = {
  windowFrac: 0.05,
  minContrast: 25,
  relContrast: 0.25,
  maxWidthFrac: 0.04,
  pairFactor: 4,
};

export interface MarkingMap {
  width: number;
  height: number;
  /** 1 where the pixel is brighter than its local road by the threshold (rows from `fromRow`). */
  mask: Uint8Array;
  maxRunWidth: number;
  pairFactor: number;
}

/**
 * A run of marking pixels in one row, columns `start`..`end` inclusive. Coordinates are continuous
 * frame pixels (column x spans x..x+1), so a run's centre is `(start + end + 1) / 2`.
 */
export interface Run {
  start: number;
  end: number;
  centre: number;
  width: number;
}

const lumaAt = (rgb: Uint8Array, i: number) =>
  0.299 * rgb[i * 3]! + 0.587 * rgb[i * 3 + 1]! + 0.114 * rgb[i * 3 + 2]!;

/**
 * The marking mask of rows `fromRow`.. of the image (rows above stay 0). The road is measured on
 * each side of the pixel separately and the brighter side counts, so the edge of a wide bright
 * region (brighter than the road on one side only) is no marking; a painted line is brighter than
 * both.
 */
export function markingMap(img: RgbImage, params: MarkingParams = DEFAULT_MARKING, fromRow = 0): MarkingMap {
  const { width, height, rgb } = img;
  const mask = new Uint8Array(width * height);
  const half = Math.max(4, Math.round(params.windowFrac * width));
  const luma = new Float64Array(width);
  const prefix = new Float64Array(width + 1);
  const mean = (lo: number, hi: number) => (prefix[hi + 1]! - prefix[lo]!) / (hi - lo + 1);
  for (let y = Math.max(0, fromRow); y < height; y++) {
    for (let x = 0; x < width; x++) {
      luma[x] = lumaAt(rgb, y * width + x);
      prefix[x + 1] = prefix[x]! + luma[x]!;
    }
    for (let x = 0; x < width; x++) {
      const left = x > 0 ? mean(Math.max(0, x - half), x - 1) : -Infinity;
      const right = x < width - 1 ? mean(x + 1, Math.min(width - 1, x + half)) : -Infinity;
      const road = Math.max(left, right);
      if (luma[x]! - road >= Math.max(params.minContrast, params.relContrast * road)) mask[y * width + x] = 1;
    }
  }
  return {
    width,
    height,
    mask,
    maxRunWidth: Math.max(2, Math.round(params.maxWidthFrac * width)),
    pairFactor: params.pairFactor,
  };
}

/**
 * The marking runs of row `y` that touch columns `x0`..`x1`, each at its full extent (a run the
 * band cuts is followed past the band's edge, so its centre and width are its own).
 */
export function rowRuns(map: MarkingMap, y: number, x0 = 0, x1 = map.width - 1): Run[] {
  if (y < 0 || y >= map.height) return [];
  const row = y * map.width;
  const on = (x: number) => x >= 0 && x < map.width && map.mask[row + x] === 1;
  const runs: Run[] = [];
  let x = Math.max(0, Math.floor(x0));
  const last = Math.min(map.width - 1, Math.ceil(x1));
  if (on(x)) while (on(x - 1)) x--;
  while (x <= last) {
    if (!on(x)) {
      x++;
      continue;
    }
    const start = x;
    while (on(x + 1)) x++;
    const width = x - start + 1;
    if (width <= map.maxRunWidth) runs.push({ start, end: x, centre: (start + x + 1) / 2, width });
    x++;
  }
  return runs;
}

/** Half-width of the band searched around a lane's point on an image `width` px wide. */
export const bandPx = (width: number, p: { bandFrac: number; minBandPx: number }) =>
  Math.max(p.minBandPx, p.bandFrac * width);

/** Consecutive runs whose centres lie close enough (for their widths) to be one double marking. */
function clusters(runs: readonly Run[], pairFactor: number): Run[][] {
  const out: Run[][] = [];
  for (const run of runs) {
    const current = out[out.length - 1];
    const prev = current?.[current.length - 1];
    if (prev && run.centre - prev.centre <= pairFactor * Math.max(prev.width, run.width)) current!.push(run);
    else out.push([run]);
  }
  return out;
}

/** The marking of row `y` nearest to `x` within `band` px: its runs (two for a double line) and centre. */
export function markingNear(
  map: MarkingMap,
  y: number,
  x: number,
  band: number,
): { runs: Run[]; centre: number } | null {
  let best: { runs: Run[]; centre: number; distance: number } | null = null;
  for (const group of clusters(rowRuns(map, y, x - band, x + band), map.pairFactor)) {
    const centre = (group[0]!.start + group[group.length - 1]!.end + 1) / 2;
    const distance = Math.abs(centre - x);
    if (distance <= band && (!best || distance < best.distance)) best = { runs: group, centre, distance };
  }
  return best && { runs: best.runs, centre: best.centre };
}

/** Sums of a run's RGB and its pixel count, to average colours over many runs. */
export function addRunColour(
  img: RgbImage,
  y: number,
  run: Run,
  into: [number, number, number, number],
): void {
  for (let x = run.start; x <= run.end; x++) {
    const i = (y * img.width + x) * 3;
    into[0] += img.rgb[i]!;
    into[1] += img.rgb[i + 1]!;
    into[2] += img.rgb[i + 2]!;
    into[3] += 1;
  }
}

/**
 * White paint is nearly grey; yellow paint has red and green well above blue. Thresholds on the
 * mean colour of the marking pixels (0–255).
 */
export function colourName(sum: readonly [number, number, number, number]): LaneColour | null {
  if (sum[3] === 0) return null;
  const [r, g, b] = [sum[0] / sum[3], sum[1] / sum[3], sum[2] / sum[3]];
  if (Math.max(r, g, b) - Math.min(r, g, b) < 40) return 'white';
  if (r - b >= 50 && g - b >= 40 && Math.abs(r - g) < 80) return 'yellow';
  return 'other';
}

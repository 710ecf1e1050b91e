import type { Box } from '../geometry';

/**
 * Sliced inference for small objects (docs/small-objects.md). The detector sees a frame
 * letterboxed into its square input, so an object of h frame pixels reaches it at h × s with
 * s = min(S/w, S/h); on a wide frame most of the input is padding and far objects shrink below
 * what the model resolves. Slicing runs the model, beside the whole frame (which keeps the large
 * objects whole), on two levels of overlapping tiles — coarse ones at the model's input size over
 * the whole frame, and fine ones that magnify the band around the horizon where a road camera sees
 * the far, small objects — and merges the views.
 */
export const SLICING_MODES = ['auto', 'on', 'off'] as const;
export type SlicingMode = (typeof SLICING_MODES)[number];

export interface SlicingRule {
  /** Height (frame px) of the smallest object the labels should find. */
  minObjectPx: number;
  /** Height (model input px) at which the model finds objects: the fine tiles magnify minObjectPx to it. */
  modelMinPx: number;
  /** Width ÷ height from which `auto` slices. */
  minAspect: number;
  /** Where the horizon lies, as a share of the frame's height from the top. */
  horizon: number;
  /** How far (share of the frame's height) the horizon may move with pitch and slope; the fine band widens by it each way. */
  horizonMargin: number;
  /** Score a detection no whole-frame box backs must reach (the whole frame's own keep the model's minScore). */
  tileMinScore: number;
}

/** A tile in frame pixels. */
export interface Tile {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** One level of tiles: square tiles of inputSize / scale frame px, over the frame or a band of it. */
export interface TileLevel {
  level: 'coarse' | 'fine';
  /** Frame px → input px inside a tile. */
  scale: number;
  /** Frame px shared by neighbouring tiles. */
  overlap: number;
  /** Rows [top, bottom) (frame px) the level must cover; the whole height for the coarse level. */
  band: [number, number];
  tiles: Tile[];
}

/** What was decided for a frame and why, as provenance records it. */
export interface SlicePlan {
  mode: SlicingMode;
  sliced: boolean;
  reason: string;
  /** Frame px → input px of the whole-frame pass. */
  frameScale: number;
  levels: TileLevel[];
  /** Every level's tiles, coarse first: what the model runs on besides the whole frame. */
  tiles: Tile[];
  /** Score floor of detections seen only on tiles; null when not sliced. */
  tileMinScore: number | null;
}

/**
 * Tile starts along one axis: the fewest tiles of `side` that cover `length` with at least
 * `overlap` shared between neighbours, spread evenly (so the overlap is never less than asked).
 */
export function axisStarts(length: number, side: number, overlap: number): number[] {
  if (side >= length) return [0];
  const n = Math.ceil((length - overlap) / (side - overlap));
  return Array.from({ length: n }, (_, i) => Math.round((i * (length - side)) / (n - 1)));
}

const round2 = (v: number): number => Math.round(v * 100) / 100;

/**
 * Where small objects stand, for a level camera over a road: an object h px tall and H m high,
 * on the ground, has its foot h × C / H below the horizon (C the camera's height), so its box
 * spans [horizon − h (1 − C/H), horizon + h C/H]. Taking objects from 1.1 m (a motorcycle, a
 * child) to 3.3 m (a bus, a lorry) and C = 1.65 m (a car's roof), every object up to `tallest`
 * px lies in [horizon − tallest / 2, horizon + 1.5 tallest], widened by the margin each way.
 */
export function horizonBand(height: number, tallest: number, rule: SlicingRule): [number, number] {
  const horizon = rule.horizon * height;
  const margin = rule.horizonMargin * height;
  return [
    Math.max(0, Math.round(horizon - tallest / 2 - margin)),
    Math.min(height, Math.round(horizon + 1.5 * tallest + margin)),
  ];
}

/** Square tiles of `side` frame px covering columns [0, width) and rows [top, bottom) with `overlap`. */
function tileLevel(
  level: TileLevel['level'],
  frame: { width: number; height: number },
  side: number,
  overlap: number,
  band: [number, number],
  inputSize: number,
): TileLevel {
  const tw = Math.min(side, frame.width);
  const th = Math.min(side, frame.height);
  const [top, bottom] = band;
  // A band lower than a tile gets one row centred on it, kept inside the frame.
  const rows =
    bottom - top <= th
      ? [Math.max(0, Math.min(frame.height - th, Math.round((top + bottom - th) / 2)))]
      : axisStarts(bottom - top, th, overlap).map((y) => y + top);
  const tiles = rows.flatMap((y) =>
    axisStarts(frame.width, tw, overlap).map((x) => ({ x, y, width: tw, height: th })),
  );
  return { level, scale: inputSize / side, overlap, band, tiles };
}

/**
 * The tile plan for a frame.
 *
 * - Coarse tiles: squares of S frame px (the model's input, scale 1) over the whole frame.
 *   Neighbours overlap by the width of the largest object the whole frame does not resolve
 *   (height modelMinPx / s, taken twice as wide as tall), at most half a tile.
 * - Fine tiles: squares of S / t frame px, t = modelMinPx / minObjectPx, so that the smallest
 *   object asked for reaches the model at the height it resolves; only over the horizon band
 *   where objects the coarse tiles miss (below modelMinPx frame px) stand (`horizonBand`),
 *   overlapping by twice that height.
 *
 * Every object a level is for lies whole inside at least one of its tiles, so a detection cut by
 * an inner tile edge can be dropped (see `cutByTile`). A level no finer than the whole frame, or
 * than the coarse tiles, is left out.
 *
 * `auto` slices when an object of minObjectPx would reach the model below modelMinPx and the frame
 * is at least minAspect wide (its letterbox wastes more than half the input); `on` whenever tiles
 * would be finer than the whole frame; `off` never.
 */
export function planSlices(
  width: number,
  height: number,
  inputSize: number,
  mode: SlicingMode,
  rule: SlicingRule,
): SlicePlan {
  const frameScale = Math.min(inputSize / width, inputSize / height);
  const seen = rule.minObjectPx * frameScale;
  const aspect = width / height;
  const unsliced = (reason: string): SlicePlan => ({
    mode,
    sliced: false,
    reason,
    frameScale,
    levels: [],
    tiles: [],
    tileMinScore: null,
  });
  if (mode === 'off') return unsliced('slicing is off');
  const frame = { width, height };
  const finer = (scale: number) =>
    scale > frameScale && Math.floor(inputSize / scale) < Math.max(width, height);
  const levels: TileLevel[] = [];
  if (finer(1)) {
    const overlap = Math.min(Math.floor(inputSize / 2), Math.ceil((2 * rule.modelMinPx) / frameScale));
    levels.push(tileLevel('coarse', frame, inputSize, overlap, [0, height], inputSize));
  }
  const fineScale = rule.modelMinPx / rule.minObjectPx;
  if (fineScale > 1 && finer(fineScale)) {
    const side = Math.floor(inputSize / fineScale);
    // The coarse tiles (scale 1) resolve objects from modelMinPx frame px: the fine ones are for those below.
    const tallest = rule.modelMinPx;
    const overlap = Math.min(Math.floor(side / 2), 2 * tallest);
    levels.push(tileLevel('fine', frame, side, overlap, horizonBand(height, tallest, rule), inputSize));
  }
  const what = `a ${rule.minObjectPx} px object reaches the model at ${round2(seen)} px (resolves from ${rule.modelMinPx} px)`;
  if (levels.length === 0) return unsliced(`tiles would be no finer than the whole frame: ${what}`);
  if (mode === 'auto') {
    if (seen >= rule.modelMinPx) return unsliced(`whole frame suffices: ${what}`);
    if (aspect < rule.minAspect)
      return unsliced(
        `aspect ${round2(aspect)} is below ${rule.minAspect}: ${what}, but the letterbox fills the input`,
      );
  }
  const why = mode === 'on' ? 'slicing is on' : `aspect ${round2(aspect)} ≥ ${rule.minAspect} and ${what}`;
  return {
    mode,
    sliced: true,
    reason: why,
    frameScale,
    levels,
    tiles: levels.flatMap((l) => l.tiles),
    tileMinScore: rule.tileMinScore,
  };
}

/** A box in tile pixels → frame pixels. */
export const tileToFrame = (b: Box, t: Tile): Box => [b[0] + t.x, b[1] + t.y, b[2] + t.x, b[3] + t.y];

/**
 * Whether a box (frame pixels) touches an edge of its tile that lies inside the frame, within
 * `margin` pixels: the tile saw only part of the object, which a neighbour or the whole frame sees whole.
 */
export function cutByTile(
  b: Box,
  t: Tile,
  frame: { width: number; height: number },
  margin: number,
): boolean {
  return (
    (t.x > 0 && b[0] <= t.x + margin) ||
    (t.y > 0 && b[1] <= t.y + margin) ||
    (t.x + t.width < frame.width && b[2] >= t.x + t.width - margin) ||
    (t.y + t.height < frame.height && b[3] >= t.y + t.height - margin)
  );
}

/** A detection of one view: whether the whole frame saw it, and its score. */
export interface ViewedDetection {
  score: number;
  /** The whole frame's pass proposed it (alone or with tiles). */
  whole: boolean;
}

/**
 * Whether a merged detection stays: one the whole frame saw keeps the model's own threshold;
 * one only tiles saw must reach the plan's tileMinScore — most of what a tile alone proposes at
 * low scores is a fragment or a look-alike, and those are what cost precision (docs/small-objects.md).
 */
export const keepMerged = (d: ViewedDetection, plan: SlicePlan): boolean =>
  d.whole || plan.tileMinScore === null || d.score >= plan.tileMinScore;

import type { Box } from '../geometry';

/**
 * Sliced inference for small objects (docs/small-objects.md). The detector sees a frame
 * letterboxed into its square input, so an object of h frame pixels reaches it at h × s with
 * s = min(S/w, S/h); on a wide frame most of the input is padding and far objects shrink below
 * what the model resolves. Slicing runs the model on overlapping tiles cut so that the smallest
 * object asked for reaches the model at the height it resolves, beside the whole frame (which
 * keeps the large objects whole), and merges the views.
 */
export const SLICING_MODES = ['auto', 'on', 'off'] as const;
export type SlicingMode = (typeof SLICING_MODES)[number];

export interface SlicingRule {
  /** Height (frame px) of the smallest object the labels should find. */
  minObjectPx: number;
  /** Height (model input px) from which the model finds objects reliably. */
  modelMinPx: number;
  /** Width ÷ height from which `auto` slices. */
  minAspect: number;
}

/** A tile in frame pixels. */
export interface Tile {
  x: number;
  y: number;
  width: number;
  height: number;
}

/** What was decided for a frame and why, as provenance records it. */
export interface SlicePlan {
  mode: SlicingMode;
  sliced: boolean;
  reason: string;
  /** Frame px → input px of the whole-frame pass. */
  frameScale: number;
  /** Frame px → input px inside a tile; null when not sliced. */
  tileScale: number | null;
  /** Frame px shared by neighbouring tiles. */
  overlap: number | null;
  tiles: Tile[];
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
 * The tile plan for a frame. Tiles are squares of S / t frame pixels (t = modelMinPx ÷ minObjectPx,
 * never below the whole frame's scale), clipped to the frame. Neighbours overlap by the width of the
 * largest object the whole-frame pass cannot resolve (height modelMinPx / s, taken twice as wide as
 * tall), so every object the tiles are for lies whole inside at least one tile; a detection cut by
 * an inner tile edge can then be dropped (see `cutByTile`).
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
  const tileScale = Math.max(frameScale, rule.modelMinPx / rule.minObjectPx);
  const side = Math.floor(inputSize / tileScale);
  const unsliced = (reason: string): SlicePlan => ({
    mode,
    sliced: false,
    reason,
    frameScale,
    tileScale: null,
    overlap: null,
    tiles: [],
  });
  if (mode === 'off') return unsliced('slicing is off');
  const what = `a ${rule.minObjectPx} px object reaches the model at ${round2(seen)} px (resolves from ${rule.modelMinPx} px)`;
  if (side >= width && side >= height)
    return unsliced(`tiles would be no finer than the whole frame: ${what}`);
  if (mode === 'auto') {
    if (seen >= rule.modelMinPx) return unsliced(`whole frame suffices: ${what}`);
    if (aspect < rule.minAspect)
      return unsliced(
        `aspect ${round2(aspect)} is below ${rule.minAspect}: ${what}, but the letterbox fills the input`,
      );
  }
  const overlap = Math.min(Math.floor(side / 2), Math.ceil((2 * rule.modelMinPx) / frameScale));
  const tw = Math.min(side, width);
  const th = Math.min(side, height);
  const tiles = axisStarts(height, th, overlap).flatMap((y) =>
    axisStarts(width, tw, overlap).map((x) => ({ x, y, width: tw, height: th })),
  );
  const why = mode === 'on' ? 'slicing is on' : `aspect ${round2(aspect)} ≥ ${rule.minAspect} and ${what}`;
  return { mode, sliced: true, reason: why, frameScale, tileScale: inputSize / side, overlap, tiles };
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

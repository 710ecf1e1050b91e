import { fitCurve, trimmedFit } from './fit';
import { bandPx, markingNear, type MarkingMap } from './image';
import { sampleRows, type Point } from './polyline';

/**
 * Carrying a lane to the next frame (POST /api/frames/{frame_id}/lanes/propagate, docs/lanes.md
 * "Propagate"): at every row of the lane the next frame's marking nearest to it within a band is
 * found, and the offsets to those markings, fitted as a straight function of the row (the lane
 * slides and turns a little between frames; its shape holds), move the whole polyline. Too few
 * rows with a marking, or offsets that disagree, and the lane is copied as it was.
 */

export interface RefineParams {
  /** Half-width of the search band around each row's point, as a share of the image width... */
  bandFrac: number;
  /** ...and at least this many pixels. */
  minBandPx: number;
  /** The share of the lane's rows that must show a marking (a dashed line shows one on about half). */
  minMatched: number;
  minRows: number;
  /** Offsets further than this from the fitted offset line are outliers (px, or the share of the width). */
  tolFrac: number;
  minTolPx: number;
  /** The share of the matched rows the fitted offset line must keep, or the marking found is not one lane. */
  minKept: number;
}

export const DEFAULT_REFINE: RefineParams = {
  bandFrac: 0.03,
  minBandPx: 4,
  minMatched: 0.15,
  minRows: 5,
  tolFrac: 0.005,
  minTolPx: 2,
  minKept: 0.6,
};

export interface Refined {
  points: Point[];
  /** False when the lane was copied as it was. */
  refined: boolean;
  /** The share of the lane's rows where the band held a marking. */
  matched: number;
  /** Mean distance the points moved (px), null when copied. */
  shift_px: number | null;
}

const round1 = (v: number) => Math.round(v * 10) / 10;

export function refineLane(map: MarkingMap, points: Point[], params: RefineParams = DEFAULT_REFINE): Refined {
  const rows = sampleRows(points);
  const band = bandPx(map.width, params);
  const offsets: Array<{ x: number; y: number }> = [];
  for (const { row, x } of rows) {
    const found = markingNear(map, row, x, band);
    if (found) offsets.push({ x: found.centre - x, y: row + 0.5 });
  }
  const matched = rows.length ? offsets.length / rows.length : 0;
  const copy: Refined = {
    points,
    refined: false,
    matched: Math.round(matched * 1000) / 1000,
    shift_px: null,
  };
  if (offsets.length < params.minRows || matched < params.minMatched) return copy;
  const start = fitCurve(offsets, 1);
  const tol = Math.max(params.minTolPx, params.tolFrac * map.width);
  const fit = start && trimmedFit(offsets, start, tol, () => 1);
  if (!fit || fit.kept.length < params.minKept * offsets.length) return copy;
  const moved = points.map(([x, y]): Point => [
    round1(Math.min(map.width, Math.max(0, x + fit.curve(y)))),
    y,
  ]);
  const shift = moved.reduce((s, [x], i) => s + Math.abs(x - points[i]![0]), 0) / points.length;
  return { ...copy, points: moved, refined: true, shift_px: Math.round(shift * 1000) / 1000 };
}

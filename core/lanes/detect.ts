import { trimmedFit, fitCurve, type Curve } from './fit';
import {
  addRunColour,
  colourName,
  DEFAULT_MARKING,
  markingMap,
  rowRuns,
  type MarkingParams,
  type RgbImage,
  type Run,
} from './image';
import { curvePolyline, type Point } from './polyline';
import type { LaneColour } from './vocabulary';

/**
 * The lane-marking detector of POST /api/frames/{frame_id}/lanes/propose (docs/lanes.md
 * "Propose"): marking runs in the lower part of the frame (./image.ts), their centres voted into a
 * Hough accumulator, the strongest line refined into a curve x(y) by a trimmed least-squares fit,
 * its points removed, and again; two curves a few marking widths apart are one double marking.
 */

export const DETECTOR_VERSION = 'ridge-hough-1';

export interface DetectorParams {
  /** Rows above this share of the height are ignored (sky, horizon, far traffic). */
  roiTop: number;
  marking: MarkingParams;
  /** Lines closer to horizontal than this many degrees are not lanes (stop lines, crossings). */
  minAngleDeg: number;
  rhoStepPx: number;
  /** A point belongs to a curve within this share of the image width (at least `minTolPx`). */
  tolFrac: number;
  minTolPx: number;
  /** A lane has marking points on at least this many rows (and this share of the region's rows). */
  minRows: number;
  minRowsFrac: number;
  /** ...spread over at least this share of the region's rows. */
  minSpanFrac: number;
  /** A curve is bent (degree 2) only when its points span this share of the region's rows. */
  curveSpanFrac: number;
  maxLanes: number;
  minConf: number;
}

export const DEFAULT_DETECTOR: DetectorParams = {
  roiTop: 0.45,
  marking: DEFAULT_MARKING,
  minAngleDeg: 20,
  rhoStepPx: 2,
  tolFrac: 0.005,
  minTolPx: 2.5,
  minRows: 6,
  minRowsFrac: 0.05,
  minSpanFrac: 0.15,
  curveSpanFrac: 0.3,
  maxLanes: 8,
  minConf: 0.3,
};

export interface LaneProposal {
  points: Point[];
  conf: number;
  /** 2 when two parallel markings were merged into their middle line. */
  markings: 1 | 2;
  colour: LaneColour | null;
  evidence: { rows: number; coverage: number; residual_px: number; marking_width_px: number };
}

/** A marking run's centre; `y` is the middle of its row (`row` + 0.5). */
interface MarkPoint {
  x: number;
  y: number;
  row: number;
  run: Run;
}

interface Candidate {
  curve: Curve;
  lo: number;
  hi: number;
  rows: number;
  coverage: number;
  residual: number;
  width: number;
  colour: [number, number, number, number];
  markings: 1 | 2;
}

function houghPeak(
  points: readonly MarkPoint[],
  img: { width: number; height: number },
  params: DetectorParams,
): { cos: number; sin: number; rho: number; votes: number } | null {
  const thetas: Array<{ cos: number; sin: number }> = [];
  for (let deg = 0; deg < 180; deg++) {
    // θ is the normal's angle: 0 is a vertical line, 90 a horizontal one.
    if (Math.abs(90 - deg) < params.minAngleDeg) continue;
    const t = (deg * Math.PI) / 180;
    thetas.push({ cos: Math.cos(t), sin: Math.sin(t) });
  }
  const rhoMin = -img.width;
  const bins = Math.ceil((img.width * 2 + img.height) / params.rhoStepPx) + 1;
  const acc = new Int32Array(thetas.length * bins);
  let best = -1;
  for (const p of points)
    thetas.forEach((t, i) => {
      const cell = i * bins + Math.round((p.x * t.cos + p.y * t.sin - rhoMin) / params.rhoStepPx);
      acc[cell]! += 1;
      if (best < 0 || acc[cell]! > acc[best]!) best = cell;
    });
  if (best < 0) return null;
  const t = thetas[Math.floor(best / bins)]!;
  return { ...t, rho: (best % bins) * params.rhoStepPx + rhoMin, votes: acc[best]! };
}

/** The kept points, one per row (the nearest to the curve), and how well they fit. */
function support(kept: readonly MarkPoint[], curve: Curve) {
  const byRow = new Map<number, MarkPoint>();
  for (const p of kept) {
    const seen = byRow.get(p.row);
    if (!seen || Math.abs(p.x - curve(p.y)) < Math.abs(seen.x - curve(seen.y))) byRow.set(p.row, p);
  }
  const rows = [...byRow.values()];
  const ys = rows.map((p) => p.y);
  const lo = Math.min(...ys);
  const hi = Math.max(...ys);
  return {
    rows,
    lo,
    hi,
    coverage: rows.length / (hi - lo + 1),
    residual: rows.reduce((s, p) => s + Math.abs(p.x - curve(p.y)), 0) / rows.length,
    width: rows.reduce((s, p) => s + p.run.width, 0) / rows.length,
  };
}

/** Mean horizontal distance of two candidates over the rows both span, and the share of the shorter they share. */
function separation(a: Candidate, b: Candidate): { distance: number; overlap: number } {
  const lo = Math.max(a.lo, b.lo);
  const hi = Math.min(a.hi, b.hi);
  if (hi <= lo) return { distance: Infinity, overlap: 0 };
  let sum = 0;
  for (let k = 0; k <= 15; k++) {
    const y = lo + ((hi - lo) * k) / 15;
    sum += Math.abs(a.curve(y) - b.curve(y));
  }
  return { distance: sum / 16, overlap: (hi - lo) / Math.min(a.hi - a.lo, b.hi - b.lo) };
}

/**
 * Two curves a pair distance apart over most of their rows are the two lines of one double
 * marking (their middle line is the lane); closer than 1.5 marking widths they are one marking
 * found twice (the better one stays).
 */
function mergePairs(candidates: Candidate[], pairFactor: number): Candidate[] {
  const out = [...candidates];
  for (let i = 0; i < out.length; i++) {
    for (let j = i + 1; j < out.length; j++) {
      const a = out[i]!;
      const b = out[j]!;
      const width = Math.max(a.width, b.width);
      const { distance, overlap } = separation(a, b);
      if (overlap < 0.5 || distance > pairFactor * width) continue;
      if (distance < 1.5 * width) {
        out[i] = a.rows >= b.rows ? a : b;
      } else {
        const colour = a.colour.map((v, k) => v + b.colour[k]!) as Candidate['colour'];
        out[i] = {
          curve: (y) => (a.curve(y) + b.curve(y)) / 2,
          lo: Math.min(a.lo, b.lo),
          hi: Math.max(a.hi, b.hi),
          rows: Math.max(a.rows, b.rows),
          coverage: Math.max(a.coverage, b.coverage),
          residual: (a.residual + b.residual) / 2,
          width: (a.width + b.width) / 2,
          colour,
          markings: 2,
        };
      }
      out.splice(j, 1);
      j = i;
    }
  }
  return out;
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** Lane markings of the image as polylines (image pixels), left to right at the bottom. */
export function proposeLanes(img: RgbImage, params: DetectorParams = DEFAULT_DETECTOR): LaneProposal[] {
  const top = Math.floor(params.roiTop * img.height);
  const roiRows = img.height - top;
  const map = markingMap(img, params.marking, top);
  let remaining: MarkPoint[] = [];
  for (let y = top; y < img.height; y++)
    for (const run of rowRuns(map, y)) remaining.push({ x: run.centre, y: y + 0.5, row: y, run });

  const tol = Math.max(params.minTolPx, params.tolFrac * img.width);
  const minRows = Math.max(params.minRows, params.minRowsFrac * roiRows);
  const degree = (kept: readonly MarkPoint[]): 1 | 2 => {
    const ys = kept.map((p) => p.y);
    return kept.length >= 10 && Math.max(...ys) - Math.min(...ys) >= params.curveSpanFrac * roiRows ? 2 : 1;
  };
  const candidates: Candidate[] = [];
  for (let round = 0; round < params.maxLanes * 3 && candidates.length < params.maxLanes; round++) {
    const peak = houghPeak(remaining, img, params);
    if (!peak || peak.votes < minRows) break;
    const onLine = (p: MarkPoint) =>
      Math.abs(p.x * peak.cos + p.y * peak.sin - peak.rho) <= tol + params.rhoStepPx / 2;
    const start = fitCurve(remaining.filter(onLine), 1);
    const fit = start && trimmedFit(remaining, start, tol, degree);
    const taken = new Set<MarkPoint>(remaining.filter(onLine));
    if (fit && fit.kept.length > 0) {
      fit.kept.forEach((p) => taken.add(p));
      const s = support(fit.kept, fit.curve);
      if (s.rows.length >= minRows && s.hi - s.lo >= params.minSpanFrac * roiRows) {
        const colour: Candidate['colour'] = [0, 0, 0, 0];
        for (const p of s.rows) addRunColour(img, p.row, p.run, colour);
        candidates.push({ curve: fit.curve, ...s, rows: s.rows.length, colour, markings: 1 });
      }
    }
    remaining = remaining.filter((p) => !taken.has(p));
  }

  return mergePairs(candidates, params.marking.pairFactor)
    .map((c): LaneProposal => {
      const conf = Math.min(1, c.coverage / 0.3) * Math.max(0, 1 - c.residual / (2 * tol));
      const n = Math.min(12, Math.max(1, Math.round((c.hi - c.lo) / (0.05 * img.height))));
      return {
        points: curvePolyline(c.curve, c.lo, c.hi, n),
        conf: round3(conf),
        markings: c.markings,
        colour: colourName(c.colour),
        evidence: {
          rows: c.rows,
          coverage: round3(c.coverage),
          residual_px: round3(c.residual),
          marking_width_px: round3(c.width),
        },
      };
    })
    .filter((p) => p.conf >= params.minConf)
    .sort((a, b) => a.points[a.points.length - 1]![0] - b.points[b.points.length - 1]![0]);
}

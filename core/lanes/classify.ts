import { fitCurve, type Curve } from './fit';
import {
  addRunColour,
  bandPx,
  colourName,
  markingNear,
  rowRuns,
  type MarkingMap,
  type RgbImage,
} from './image';
import { sampleRows, type Point } from './polyline';
import type { LaneColour, LaneType } from './vocabulary';

/**
 * The lane type from the frame's pixels along the lane (POST /api/sessions/{session_id}/lanes/classify,
 * docs/lanes.md "Classify"). At every row of the polyline the marking nearest to it within the band
 * is looked up; the share of rows that show paint (the duty cycle) and how the painted rows group
 * into segments tell a solid line from dashes and dots; two markings side by side on enough rows
 * make two strands, each judged the same way; no paint near the side of the image is a road edge.
 */

export const CLASSIFIER_VERSION = 'duty-cycle-1';

export interface ClassifyParams {
  bandFrac: number;
  minBandPx: number;
  /** A strand painted on at least this share of its rows is solid... */
  solidDuty: number;
  /** ...on less than this share it is no marking at all. */
  minDuty: number;
  /** Two strands when this share of the painted rows shows two markings side by side. */
  doubleShare: number;
  /** Segments no longer (in rows) than this many marking widths are dots, longer ones dashes. */
  dotRatio: number;
  /** Unpainted gaps of at most this many rows inside a segment are noise, not a gap between dashes. */
  gapRows: number;
  /** A lane without paint whose bottom end lies within this share of the width of a side is a road edge. */
  sideFrac: number;
}

export const DEFAULT_CLASSIFY: ClassifyParams = {
  bandFrac: 0.03,
  minBandPx: 4,
  solidDuty: 0.8,
  minDuty: 0.1,
  doubleShare: 0.3,
  dotRatio: 1,
  gapRows: 2,
  sideFrac: 0.2,
};

type StrandKind = 'solid' | 'dashed' | 'dots' | 'none';

export interface StrandEvidence {
  side: 'single' | 'left' | 'right';
  kind: StrandKind;
  duty: number;
  segments: number;
  mean_segment_rows: number;
  marking_width_px: number;
}

export interface LaneClass {
  lane_type: LaneType;
  colour: LaneColour | null;
  /** Painted strands found (0 for a road edge or an unknown lane). */
  markings: 0 | 1 | 2;
  solid_side: 'left' | 'right' | null;
  evidence: {
    rows: number;
    painted: number;
    double_rows: number;
    band_px: number;
    strands: StrandEvidence[];
  };
}

const round3 = (v: number) => Math.round(v * 1000) / 1000;

/** Segment lengths of a row profile, gaps of at most `gapRows` bridged. */
function segmentsOf(on: readonly boolean[], gapRows: number): number[] {
  const out: number[] = [];
  let start = -1;
  let lastOn = -Infinity;
  on.forEach((painted, i) => {
    if (!painted) return;
    if (start >= 0 && i - lastOn - 1 <= gapRows) {
      lastOn = i;
      return;
    }
    if (start >= 0) out.push(lastOn - start + 1);
    start = i;
    lastOn = i;
  });
  if (start >= 0) out.push(lastOn - start + 1);
  return out;
}

function strand(
  side: StrandEvidence['side'],
  on: readonly boolean[],
  widths: readonly number[],
  p: ClassifyParams,
): StrandEvidence {
  const duty = on.length ? on.filter(Boolean).length / on.length : 0;
  const segments = segmentsOf(on, p.gapRows);
  const meanRows = segments.length ? segments.reduce((s, v) => s + v, 0) / segments.length : 0;
  const width = widths.length ? widths.reduce((s, v) => s + v, 0) / widths.length : 0;
  const kind: StrandKind =
    duty < p.minDuty
      ? 'none'
      : duty >= p.solidDuty || segments.length === 1
        ? 'solid'
        : meanRows <= p.dotRatio * width
          ? 'dots'
          : 'dashed';
  return {
    side,
    kind,
    duty: round3(duty),
    segments: segments.length,
    mean_segment_rows: round3(meanRows),
    marking_width_px: round3(width),
  };
}

const SINGLE_TYPE: Record<Exclude<StrandKind, 'none'>, LaneType> = {
  solid: 'solid',
  dashed: 'dashed',
  dots: 'botts_dots',
};

export function classifyLane(
  img: RgbImage,
  map: MarkingMap,
  points: Point[],
  p: ClassifyParams = DEFAULT_CLASSIFY,
): LaneClass {
  const band = bandPx(img.width, p);
  const rows = sampleRows(points).map((r) => ({ ...r, near: markingNear(map, r.row, r.x, band) }));
  const painted = rows.filter((r) => r.near);
  const doubles = painted.filter((r) => r.near!.runs.length >= 2);
  const colour: [number, number, number, number] = [0, 0, 0, 0];
  for (const r of painted) for (const run of r.near!.runs) addRunColour(img, r.row, run, colour);

  let strands: StrandEvidence[];
  if (doubles.length >= Math.max(3, p.doubleShare * painted.length)) {
    // Each strand's offset from the polyline, fitted along the rows (the gap widens towards the camera).
    const offsetOf = (pick: 'first' | 'last'): Curve | null =>
      fitCurve(
        doubles.map((r) => {
          const runs = r.near!.runs;
          return { x: runs[pick === 'first' ? 0 : runs.length - 1]!.centre - r.x, y: r.row + 0.5 };
        }),
        1,
      );
    const width = doubles.reduce((s, r) => s + r.near!.runs[0]!.width, 0) / doubles.length;
    const tol = Math.max(2, width);
    strands = (['left', 'right'] as const).map((side) => {
      const offset = offsetOf(side === 'left' ? 'first' : 'last');
      const widths: number[] = [];
      const on = rows.map((r) => {
        if (!offset) return false;
        const at = r.x + offset(r.row + 0.5);
        const run = rowRuns(map, r.row, r.x - band, r.x + band).find((u) => Math.abs(u.centre - at) <= tol);
        if (run) widths.push(run.width);
        return run !== undefined;
      });
      return strand(side, on, widths, p);
    });
  } else {
    strands = [
      strand(
        'single',
        rows.map((r) => r.near !== null),
        painted.map((r) => r.near!.runs[0]!.width),
        p,
      ),
    ];
  }
  const marked = strands.filter((s) => s.kind !== 'none');
  const evidence = {
    rows: rows.length,
    painted: round3(rows.length ? painted.length / rows.length : 0),
    double_rows: round3(painted.length ? doubles.length / painted.length : 0),
    band_px: round3(band),
    strands,
  };
  const out = (lane_type: LaneType, solid_side: LaneClass['solid_side'] = null): LaneClass => ({
    lane_type,
    colour: marked.length ? colourName(colour) : null,
    markings: marked.length as 0 | 1 | 2,
    solid_side,
    evidence,
  });
  if (marked.length === 2) {
    const [left, right] = marked as [StrandEvidence, StrandEvidence];
    if (left.kind === 'solid' && right.kind === 'solid') return out('double_solid');
    if (left.kind === 'solid' || right.kind === 'solid')
      return out('solid_dashed', left.kind === 'solid' ? 'left' : 'right');
    return out(left.kind === right.kind ? SINGLE_TYPE[left.kind as 'dashed' | 'dots'] : 'dashed');
  }
  if (marked.length === 1) return out(SINGLE_TYPE[marked[0]!.kind as Exclude<StrandKind, 'none'>]);
  const bottom = points.reduce((a, b) => (b[1] > a[1] ? b : a));
  const nearSide = bottom[0] <= p.sideFrac * img.width || bottom[0] >= (1 - p.sideFrac) * img.width;
  return out(nearSide && rows.length > 0 ? 'road_edge' : 'unknown');
}

import simplify from 'simplify-js';

/**
 * Drivable area from the road segmentation model's class scores (docs/drivable.md): the road class
 * cleaned into a mask, traced into rings (outer rings and holes), simplified into polygons; the
 * curb and lane-marking classes into candidate polylines. Pure: grids in, frame-pixel shapes out.
 */

/** The model's classes, in the order of its output channels. */
export const ROAD_CLASSES = ['background', 'road', 'curb', 'lane_marking'] as const;
export type RoadClass = (typeof ROAD_CLASSES)[number];
const ROAD = 1;
const CURB = 2;
const LANE = 3;

/** A grid of the model's output size: row-major, one value per cell. */
export interface Grid {
  width: number;
  height: number;
}

/** How masks become shapes; every threshold is in cells of the model's output grid. */
export interface DrivableOptions {
  /** Road components smaller than this are noise and go (0.1% of 896×512). */
  minRoadCells: number;
  /** Holes in the road smaller than this are filled (the same 0.1%): a car is far larger. */
  maxHoleCells: number;
  /** Douglas–Peucker tolerance of the rings, in cells (at 896×512, 1.5 cells ≈ 3 px of a 1920 px frame). */
  toleranceCells: number;
  /** Curb or lane-marking components smaller than this make no candidate. */
  minCandidateCells: number;
  /** Tolerance of the candidate polylines, in cells. */
  candidateToleranceCells: number;
  /** At most this many candidates per frame, the largest components first. */
  maxCandidates: number;
}

export const DEFAULT_DRIVABLE_OPTIONS: DrivableOptions = {
  minRoadCells: 459,
  maxHoleCells: 459,
  toleranceCells: 1.5,
  minCandidateCells: 30,
  candidateToleranceCells: 2,
  maxCandidates: 40,
};

/** The class of each cell: the highest of its scores (NHWC scores, `classes` per cell). */
export function classMap(scores: Float32Array, grid: Grid, classes = ROAD_CLASSES.length): Uint8Array {
  const n = grid.width * grid.height;
  if (scores.length !== n * classes)
    throw new Error(
      `expected ${n * classes} scores for ${grid.width}×${grid.height}×${classes}, got ${scores.length}`,
    );
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    let best = 0;
    for (let c = 1; c < classes; c++) if (scores[i * classes + c]! > scores[i * classes + best]!) best = c;
    out[i] = best;
  }
  return out;
}

/**
 * Connected components of the cells where `mask` is 1 (4-connected, the connectivity the ring
 * tracer separates diagonal neighbours by): a label per cell (0 = none) and each component's cells.
 */
export function components(
  mask: Uint8Array,
  grid: Grid,
  value = 1,
): { label: Int32Array; members: number[][] } {
  const { width, height } = grid;
  const label = new Int32Array(mask.length);
  const members: number[][] = [];
  const stack: number[] = [];
  for (let start = 0; start < mask.length; start++) {
    if (mask[start] !== value || label[start] !== 0) continue;
    const cells: number[] = [];
    members.push(cells);
    label[start] = members.length;
    stack.push(start);
    while (stack.length > 0) {
      const i = stack.pop()!;
      cells.push(i);
      const x = i % width;
      const y = (i - x) / width;
      const next = [
        x > 0 ? i - 1 : -1,
        x < width - 1 ? i + 1 : -1,
        y > 0 ? i - width : -1,
        y < height - 1 ? i + width : -1,
      ];
      for (const j of next)
        if (j >= 0 && mask[j] === value && label[j] === 0) {
          label[j] = members.length;
          stack.push(j);
        }
    }
  }
  return { label, members };
}

/**
 * The road mask cleaned: components under `minRoadCells` removed, then holes (background
 * components that do not reach the border) under `maxHoleCells` filled.
 */
export function cleanMask(
  mask: Uint8Array,
  grid: Grid,
  opts: Pick<DrivableOptions, 'minRoadCells' | 'maxHoleCells'>,
): Uint8Array {
  const out = Uint8Array.from(mask);
  for (const cells of components(out, grid, 1).members)
    if (cells.length < opts.minRoadCells) for (const i of cells) out[i] = 0;
  const { width, height } = grid;
  const onBorder = (i: number) => {
    const x = i % width;
    const y = (i - x) / width;
    return x === 0 || y === 0 || x === width - 1 || y === height - 1;
  };
  for (const cells of components(out, grid, 0).members)
    if (cells.length < opts.maxHoleCells && !cells.some(onBorder)) for (const i of cells) out[i] = 1;
  return out;
}

export type Point = [number, number];

/** Twice the signed area (shoelace); positive for the outer rings the tracer makes, negative for holes. */
export function signedArea2(ring: Point[]): number {
  let s = 0;
  for (let i = 0; i < ring.length; i++) {
    const [x0, y0] = ring[i]!;
    const [x1, y1] = ring[(i + 1) % ring.length]!;
    s += x0 * y1 - x1 * y0;
  }
  return s;
}

/**
 * The boundaries of a binary mask as closed rings along cell edges (corner coordinates, 0..width).
 * Each boundary edge is walked with the mask on its right, so outer rings come out with positive
 * area and holes negative; where two cells touch only at a corner the walk turns right, which
 * keeps them apart (4-connectivity, as `components`).
 */
export function traceRings(mask: Uint8Array, grid: Grid): Point[][] {
  const { width, height } = grid;
  const at = (x: number, y: number) =>
    x >= 0 && y >= 0 && x < width && y < height && mask[y * width + x] === 1;
  const W1 = width + 1;
  // Outgoing boundary edges per corner, as a direction: 0 east, 1 south, 2 west, 3 north.
  const out = new Map<number, number[]>();
  const add = (x: number, y: number, dir: number) => {
    const k = y * W1 + x;
    const list = out.get(k);
    if (list) list.push(dir);
    else out.set(k, [dir]);
  };
  for (let y = 0; y < height; y++)
    for (let x = 0; x < width; x++) {
      if (!at(x, y)) continue;
      if (!at(x, y - 1)) add(x, y, 0);
      if (!at(x + 1, y)) add(x + 1, y, 1);
      if (!at(x, y + 1)) add(x + 1, y + 1, 2);
      if (!at(x - 1, y)) add(x, y + 1, 3);
    }
  const step = [
    [1, 0],
    [0, 1],
    [-1, 0],
    [0, -1],
  ];
  const rings: Point[][] = [];
  for (const [startKey, dirs] of out) {
    while (dirs.length > 0) {
      const ring: Point[] = [];
      let key = startKey;
      let dir = dirs.pop()!;
      for (;;) {
        const x = key % W1;
        const y = (key - x) / W1;
        ring.push([x, y]);
        const [dx, dy] = step[dir]!;
        const nx = x + dx!;
        const ny = y + dy!;
        key = ny * W1 + nx;
        if (key === startKey) break;
        const options = out.get(key)!;
        // Right turn first, then straight, then left: the one present.
        const pick = [(dir + 1) % 4, dir, (dir + 3) % 4].find((d) => options.includes(d));
        if (pick === undefined) break;
        options.splice(options.indexOf(pick), 1);
        dir = pick;
      }
      rings.push(dropCollinear(ring));
    }
  }
  return rings;
}

/** Keeps only the corners of an axis-aligned ring (the simplifier then has fewer points to weigh). */
function dropCollinear(ring: Point[]): Point[] {
  return ring.filter((p, i) => {
    const a = ring[(i + ring.length - 1) % ring.length]!;
    const b = ring[(i + 1) % ring.length]!;
    return (b[0] - a[0]) * (p[1] - a[1]) !== (b[1] - a[1]) * (p[0] - a[0]);
  });
}

/** A closed ring simplified by Douglas–Peucker (simplify-js, the high-quality pass) at `tolerance`. */
export function simplifyRing(ring: Point[], tolerance: number): Point[] {
  const closed = [...ring, ring[0]!].map(([x, y]) => ({ x, y }));
  const kept = simplify(closed, tolerance, true).map((p): Point => [p.x, p.y]);
  kept.pop();
  return kept;
}

/** Even–odd point-in-ring test. */
export function insideRing(p: Point, ring: Point[]): boolean {
  let inside = false;
  for (let i = 0, j = ring.length - 1; i < ring.length; j = i++) {
    const [xi, yi] = ring[i]!;
    const [xj, yj] = ring[j]!;
    if (yi > p[1] !== yj > p[1] && p[0] < ((xj - xi) * (p[1] - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

/** A candidate polyline for the lanes routes: which class made it, its points (frame px) and its score. */
export interface Candidate {
  kind: 'curb' | 'lane_marking';
  points: Point[];
  /** The class's mean score over the component's cells. */
  score: number;
}

export interface DrivableShapes {
  /** Outer rings, flat [x, y, x, y, ...] in frame pixels. */
  polygons: number[][];
  /** Holes, flat, in frame pixels. */
  holes: number[][];
  candidates: Candidate[];
  stats: {
    grid: [number, number];
    road_fraction: number;
    curb_fraction: number;
    lane_marking_fraction: number;
    tolerance_cells: number;
    tolerance_px: number;
    min_road_cells: number;
    max_hole_cells: number;
  };
}

const round1 = (v: number) => Math.round(v * 10) / 10;

/**
 * A component as a polyline along its long axis: the cells' principal direction, split into
 * bins along it, one centroid per bin, then simplified.
 */
function componentPolyline(cells: number[], grid: Grid, tolerance: number): Point[] {
  let mx = 0;
  let my = 0;
  for (const i of cells) {
    mx += (i % grid.width) + 0.5;
    my += Math.floor(i / grid.width) + 0.5;
  }
  mx /= cells.length;
  my /= cells.length;
  let sxx = 0;
  let syy = 0;
  let sxy = 0;
  for (const i of cells) {
    const dx = (i % grid.width) + 0.5 - mx;
    const dy = Math.floor(i / grid.width) + 0.5 - my;
    sxx += dx * dx;
    syy += dy * dy;
    sxy += dx * dy;
  }
  const theta = 0.5 * Math.atan2(2 * sxy, sxx - syy);
  const ux = Math.cos(theta);
  const uy = Math.sin(theta);
  const t = cells.map(
    (i) => ((i % grid.width) + 0.5 - mx) * ux + (Math.floor(i / grid.width) + 0.5 - my) * uy,
  );
  const lo = Math.min(...t);
  const hi = Math.max(...t);
  // One bin per ~4 cells of length: enough points to follow a curve, few enough to stay smooth.
  const bins = Math.max(2, Math.ceil((hi - lo) / 4));
  const sum = Array.from({ length: bins }, () => ({ x: 0, y: 0, n: 0 }));
  cells.forEach((i, k) => {
    const b = Math.min(bins - 1, Math.floor(((t[k]! - lo) / (hi - lo || 1)) * bins));
    const bin = sum[b]!;
    bin.x += (i % grid.width) + 0.5;
    bin.y += Math.floor(i / grid.width) + 0.5;
    bin.n++;
  });
  const line = sum.filter((s) => s.n > 0).map((s) => ({ x: s.x / s.n, y: s.y / s.n }));
  return simplify(line, tolerance, true).map((p): Point => [p.x, p.y]);
}

/**
 * The drivable shapes of one frame from the model's NHWC class scores on `grid`, scaled to a
 * frame of `frameWidth`×`frameHeight`.
 */
export function drivableShapes(
  scores: Float32Array,
  grid: Grid,
  frame: { width: number; height: number },
  opts: DrivableOptions = DEFAULT_DRIVABLE_OPTIONS,
): DrivableShapes {
  const classes = classMap(scores, grid);
  const n = grid.width * grid.height;
  const road = cleanMask(
    classes.map((c) => (c === ROAD ? 1 : 0)),
    grid,
    opts,
  );
  const sx = frame.width / grid.width;
  const sy = frame.height / grid.height;
  const toFrame = (p: Point): Point => [round1(p[0] * sx), round1(p[1] * sy)];
  const polygons: number[][] = [];
  const holes: number[][] = [];
  for (const ring of traceRings(road, grid)) {
    const simple = simplifyRing(ring, opts.toleranceCells);
    if (simple.length < 3) continue;
    (signedArea2(ring) > 0 ? polygons : holes).push(simple.map(toFrame).flat());
  }
  const found: Array<Candidate & { cells: number }> = [];
  for (const [value, kind] of [
    [CURB, 'curb'],
    [LANE, 'lane_marking'],
  ] as const)
    for (const cells of components(classes, grid, value).members) {
      if (cells.length < opts.minCandidateCells) continue;
      const score = cells.reduce((s, i) => s + scores[i * ROAD_CLASSES.length + value]!, 0) / cells.length;
      const points = componentPolyline(cells, grid, opts.candidateToleranceCells).map(toFrame);
      found.push({ kind, points, score: Math.round(score * 1000) / 1000, cells: cells.length });
    }
  const count = (mask: ArrayLike<number>, v: number) => {
    let k = 0;
    for (let i = 0; i < n; i++) if (mask[i] === v) k++;
    return k;
  };
  return {
    polygons,
    holes,
    candidates: found
      .sort((a, b) => b.cells - a.cells)
      .slice(0, opts.maxCandidates)
      .map(({ kind, points, score }) => ({ kind, points, score })),
    stats: {
      grid: [grid.width, grid.height],
      road_fraction: count(road, 1) / n,
      curb_fraction: count(classes, CURB) / n,
      lane_marking_fraction: count(classes, LANE) / n,
      tolerance_cells: opts.toleranceCells,
      tolerance_px: round1(opts.toleranceCells * Math.max(sx, sy)),
      min_road_cells: opts.minRoadCells,
      max_hole_cells: opts.maxHoleCells,
    },
  };
}

import {
  classMap,
  cleanMask,
  drivableShapes,
  insideRing,
  signedArea2,
  simplifyRing,
  traceRings,
  type Grid,
  type Point,
} from '.';

/** A grid painted by a function of (x, y) → class; scores put 0.9 on the class and 0.1/3 elsewhere. */
function scoresOf(grid: Grid, paint: (x: number, y: number) => number): Float32Array {
  const s = new Float32Array(grid.width * grid.height * 4).fill(0.1 / 3);
  for (let y = 0; y < grid.height; y++)
    for (let x = 0; x < grid.width; x++) s[(y * grid.width + x) * 4 + paint(x, y)] = 0.9;
  return s;
}

const maskOf = (grid: Grid, on: (x: number, y: number) => boolean) =>
  Uint8Array.from({ length: grid.width * grid.height }, (_, i) =>
    on(i % grid.width, Math.floor(i / grid.width)) ? 1 : 0,
  );

const flatToPoints = (flat: number[]): Point[] =>
  flat.flatMap((v, i) => (i % 2 === 0 ? [[v, flat[i + 1]!] as Point] : []));

describe('drivable core', () => {
  it('takes the highest score per cell', () => {
    const grid = { width: 2, height: 1 };
    expect(Array.from(classMap(Float32Array.from([0.1, 0.7, 0.1, 0.1, 0.2, 0.1, 0.1, 0.6]), grid))).toEqual([
      1, 3,
    ]);
    expect(() => classMap(new Float32Array(3), grid)).toThrow('expected 8 scores');
  });

  it('traces a square with a hole as one outer ring and one hole, exactly', () => {
    const grid = { width: 10, height: 10 };
    const mask = maskOf(
      grid,
      (x, y) => x >= 2 && x < 8 && y >= 2 && y < 8 && !(x >= 4 && x < 6 && y >= 4 && y < 6),
    );
    const rings = traceRings(mask, grid);
    expect(rings).toHaveLength(2);
    const areas = rings.map((r) => signedArea2(r) / 2).sort((a, b) => a - b);
    expect(areas).toEqual([-4, 36]);
    const outer = rings.find((r) => signedArea2(r) > 0)!;
    expect(outer.length).toBe(4);
    expect(insideRing([3, 3], outer)).toBe(true);
    expect(insideRing([9, 9], outer)).toBe(false);
  });

  it('keeps cells touching only at a corner apart', () => {
    const grid = { width: 4, height: 4 };
    const rings = traceRings(
      maskOf(grid, (x, y) => (x === 1 && y === 1) || (x === 2 && y === 2)),
      grid,
    );
    expect(rings.map((r) => signedArea2(r) / 2)).toEqual([1, 1]);
  });

  it('removes small components and fills small holes, keeps large ones', () => {
    const grid = { width: 40, height: 40 };
    const mask = maskOf(grid, (x, y) => {
      if (x < 2 && y < 2) return true; // a 4-cell speck
      const inBlock = x >= 5 && x < 35 && y >= 5 && y < 35;
      const smallHole = x >= 8 && x < 10 && y >= 8 && y < 10; // 4 cells
      const bigHole = x >= 20 && x < 30 && y >= 20 && y < 30; // 100 cells
      return inBlock && !smallHole && !bigHole;
    });
    const out = cleanMask(mask, grid, { minRoadCells: 10, maxHoleCells: 50 });
    expect(out[0]).toBe(0);
    expect(out[8 * 40 + 8]).toBe(1);
    expect(out[25 * 40 + 25]).toBe(0);
    expect(out[6 * 40 + 6]).toBe(1);
  });

  it('simplifies a staircase within the tolerance', () => {
    const stairs: Point[] = [];
    for (let i = 0; i < 20; i++) stairs.push([i, i], [i + 1, i]);
    stairs.push([20, 20], [0, 20]);
    const simple = simplifyRing(stairs, 1.5);
    expect(simple.length).toBeLessThan(6);
    expect(Math.abs(signedArea2(simple) - signedArea2(stairs)) / Math.abs(signedArea2(stairs))).toBeLessThan(
      0.1,
    );
  });

  it('makes frame-pixel polygons of the road and candidates of curb and lane marking', () => {
    const grid = { width: 64, height: 32 };
    // Road on the lower half; a lane marking stripe down its middle; a curb along its left edge.
    const scores = scoresOf(grid, (x, y) => (y < 16 ? 0 : x === 31 || x === 32 ? 3 : x < 2 ? 2 : 1));
    const shapes = drivableShapes(
      scores,
      grid,
      { width: 1280, height: 640 },
      {
        minRoadCells: 20,
        maxHoleCells: 20,
        toleranceCells: 1,
        minCandidateCells: 10,
        candidateToleranceCells: 1,
        maxCandidates: 10,
      },
    );
    // The marking splits the road into two 4-connected parts.
    expect(shapes.polygons).toHaveLength(2);
    expect(shapes.holes).toHaveLength(0);
    const rings = shapes.polygons.map(flatToPoints);
    const inside = (p: Point) => rings.some((r) => insideRing(p, r));
    expect(inside([300, 500])).toBe(true);
    expect(inside([1000, 600])).toBe(true);
    expect(inside([300, 100])).toBe(false);
    expect(inside([640, 500])).toBe(false);
    const lane = shapes.candidates.find((c) => c.kind === 'lane_marking')!;
    expect(lane.score).toBeCloseTo(0.9, 5);
    for (const [x, y] of lane.points) {
      expect(Math.abs(x - 640)).toBeLessThanOrEqual(20);
      expect(y).toBeGreaterThanOrEqual(320);
    }
    expect(
      Math.max(...lane.points.map((p) => p[1])) - Math.min(...lane.points.map((p) => p[1])),
    ).toBeGreaterThan(200); // 320 px of stripe, less half a bin at each end
    expect(shapes.candidates.some((c) => c.kind === 'curb' && c.points.every(([x]) => x < 40))).toBe(true);
    expect(shapes.stats.road_fraction).toBeCloseTo((16 * 60) / (64 * 32), 5);
    expect(shapes.stats.tolerance_px).toBe(20);
  });
});

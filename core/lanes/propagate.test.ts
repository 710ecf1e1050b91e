import { proposeLanes } from './detect';
import { markingMap } from './image';
import type { Point } from './polyline';
import { refineLane } from './propagate';
import { drawRoad, markingCentre, WHITE, type DrawnRoad } from './synthetic-road';

const road = (dx: number): DrawnRoad => ({
  width: 320,
  height: 240,
  vanishing: [160 + dx, 96],
  markings: [
    { bottomX: 40 + dx, bottomWidth: 8, colour: WHITE },
    { bottomX: 170 + dx, bottomWidth: 8, colour: WHITE, pattern: { on: 12, off: 12 } },
  ],
});

describe('refineLane', () => {
  it("moves a frame's lanes onto the next frame's markings, the dashes too", () => {
    const lanes = proposeLanes(drawRoad(road(0)));
    expect(lanes).toHaveLength(2);
    const next = road(6);
    const map = markingMap(drawRoad(next));
    lanes.forEach((lane, i) => {
      const out = refineLane(map, lane.points);
      expect(out.refined).toBe(true);
      expect(out.shift_px).toBeGreaterThan(4);
      const m = next.markings[i]!;
      for (const [x, y] of out.points) expect(Math.abs(x - markingCentre(next, m, y))).toBeLessThan(1.5);
      // Rows are kept: only x moves.
      expect(out.points.map((p) => p[1])).toEqual(lane.points.map((p) => p[1]));
    });
  });

  it('copies a lane with no marking in its band', () => {
    const map = markingMap(drawRoad(road(0)));
    const bare: Point[] = [
      [300, 120],
      [318, 239],
    ];
    expect(refineLane(map, bare)).toEqual({ points: bare, refined: false, matched: 0, shift_px: null });
  });
});

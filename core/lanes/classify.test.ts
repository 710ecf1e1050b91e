import { classifyLane } from './classify';
import { markingMap } from './image';
import type { Point } from './polyline';
import { drawRoad, markingCentre, WHITE, YELLOW, type DrawnMarking, type DrawnRoad } from './synthetic-road';

const road = (markings: DrawnMarking[]): DrawnRoad => ({
  width: 320,
  height: 240,
  vanishing: [160, 96],
  markings,
});
/** The drawn line through bottom x, as a polyline from row 110 to the bottom. */
const along = (r: DrawnRoad, bottomX: number): Point[] =>
  [110, 150, 190, 239].map((y): Point => [
    markingCentre(r, { bottomX, bottomWidth: 1, colour: WHITE }, y),
    y,
  ]);

function classify(r: DrawnRoad, bottomX: number) {
  const img = drawRoad(r);
  return classifyLane(img, markingMap(img), along(r, bottomX));
}

describe('classifyLane', () => {
  it('tells solid from dashed from dots by the duty cycle and the segments, with the colour', () => {
    const solid = classify(road([{ bottomX: 60, bottomWidth: 8, colour: WHITE }]), 60);
    expect([solid.lane_type, solid.colour, solid.markings]).toEqual(['solid', 'white', 1]);
    expect(solid.evidence.strands[0]!.duty).toBeGreaterThan(0.95);

    const dashed = classify(
      road([{ bottomX: 60, bottomWidth: 8, colour: YELLOW, pattern: { on: 12, off: 12 } }]),
      60,
    );
    expect([dashed.lane_type, dashed.colour]).toEqual(['dashed', 'yellow']);
    expect(dashed.evidence.strands[0]!.duty).toBeGreaterThan(0.4);
    expect(dashed.evidence.strands[0]!.duty).toBeLessThan(0.6);
    expect(dashed.evidence.strands[0]!.segments).toBeGreaterThanOrEqual(5);

    const dots = classify(
      road([{ bottomX: 60, bottomWidth: 10, colour: WHITE, pattern: { on: 2, off: 10 } }]),
      60,
    );
    expect(dots.lane_type).toBe('botts_dots');
  });

  it('finds two strands: double solid, and solid beside dashed with the solid side', () => {
    const double = road([
      { bottomX: 262, bottomWidth: 6, colour: YELLOW },
      { bottomX: 278, bottomWidth: 6, colour: YELLOW },
    ]);
    const d = classify(double, 270);
    expect([d.lane_type, d.colour, d.markings, d.solid_side]).toEqual(['double_solid', 'yellow', 2, null]);
    expect(d.evidence.strands.map((s) => s.side)).toEqual(['left', 'right']);

    const mixed = road([
      { bottomX: 262, bottomWidth: 6, colour: WHITE, pattern: { on: 12, off: 12 } },
      { bottomX: 278, bottomWidth: 6, colour: WHITE },
    ]);
    const m = classify(mixed, 270);
    expect([m.lane_type, m.solid_side, m.markings]).toEqual(['solid_dashed', 'right', 2]);
    // A polyline drawn on one of the two lines still names the pair.
    expect(classify(double, 262).lane_type).toBe('double_solid');
  });

  it('calls a lane without paint at the side of the image a road edge, elsewhere unknown', () => {
    const bare = road([{ bottomX: 230, bottomWidth: 8, colour: WHITE }]);
    const edge = classify(bare, 20);
    expect([edge.lane_type, edge.colour, edge.markings]).toEqual(['road_edge', null, 0]);
    expect(classify(bare, 300).lane_type).toBe('road_edge');
    expect(classify(bare, 100).lane_type).toBe('unknown');
  });
});

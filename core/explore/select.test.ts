import { inPolygon, inRect, selectPoints } from './select';

describe('selection geometry', () => {
  it('keeps the points inside a rectangle, sides included, whichever corners are given', () => {
    const r = { x_min: 0, y_min: 0, x_max: 2, y_max: 1 };
    expect(inRect(1, 0.5, r)).toBe(true);
    expect(inRect(2, 1, r)).toBe(true);
    expect(inRect(2.0001, 1, r)).toBe(false);
    expect(inRect(1, 0.5, { x_min: 2, y_min: 1, x_max: 0, y_max: 0 })).toBe(true);
  });

  it('follows the even-odd rule in a concave polygon, edges and vertices inside', () => {
    // A "U": the notch between x 1..2 above y 1 is outside.
    const u: Array<[number, number]> = [
      [0, 0],
      [3, 0],
      [3, 3],
      [2, 3],
      [2, 1],
      [1, 1],
      [1, 3],
      [0, 3],
    ];
    expect(inPolygon(0.5, 2, u)).toBe(true);
    expect(inPolygon(1.5, 2, u)).toBe(false);
    expect(inPolygon(1.5, 0.5, u)).toBe(true);
    expect(inPolygon(1.5, 1, u)).toBe(true); // on the notch's floor
    expect(inPolygon(2, 3, u)).toBe(true); // a vertex
    expect(inPolygon(4, 1, u)).toBe(false);
    expect(
      inPolygon(0, 3, [
        [0, 0],
        [1, 1],
      ]),
    ).toBe(false);
  });

  it('selects in input order', () => {
    const points = [
      { id: 'a', x: 6, y: 6 },
      { id: 'b', x: 0.5, y: 0.5 },
      { id: 'c', x: 1, y: 1 },
    ];
    expect(
      selectPoints(points, { rect: { x_min: 0, y_min: 0, x_max: 1, y_max: 1 } }).map((p) => p.id),
    ).toEqual(['b', 'c']);
    expect(
      selectPoints(points, {
        polygon: [
          [0, 0],
          [10, 0],
          [0, 10],
        ],
      }).map((p) => p.id),
    ).toEqual(['b', 'c']);
  });
});

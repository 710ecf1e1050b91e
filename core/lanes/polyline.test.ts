import { fitCurve } from './fit';
import { colourName, markingMap, markingNear, rowRuns } from './image';
import { meanRowDistance, polylineProblem, sampleRows, xAtRow } from './polyline';

describe('lane polylines', () => {
  it('refuses points outside the frame and a polyline of one repeated point', () => {
    const frame = { width: 100, height: 50 };
    expect(
      polylineProblem(
        [
          [0, 0],
          [100, 50],
        ],
        frame,
      ),
    ).toBeNull();
    expect(
      polylineProblem(
        [
          [0, 0],
          [101, 10],
        ],
        frame,
      ),
    ).toEqual({ index: 1, message: 'outside the 100×50 frame' });
    expect(
      polylineProblem(
        [
          [3, 4],
          [3, 4],
        ],
        frame,
      )?.index,
    ).toBeNull();
  });

  it('reads a polyline row by row and measures two by their shared rows', () => {
    const a: Array<[number, number]> = [
      [10, 0],
      [20, 10],
      [20, 20],
    ];
    expect(xAtRow(a, 5)).toBe(15);
    expect(xAtRow(a, 25)).toBeNull();
    expect(sampleRows(a).map((r) => r.row)).toEqual([...Array(20).keys()]);
    expect(sampleRows(a)[0]).toEqual({ row: 0, x: 10.5 });
    const shifted = a.map(([x, y]): [number, number] => [x + 4, y]);
    expect(meanRowDistance(a, shifted)).toBeCloseTo(4);
    expect(
      meanRowDistance(a, [
        [0, 30],
        [0, 40],
      ]),
    ).toBe(Infinity);
  });

  it('fits a bent curve exactly', () => {
    const pts = [0, 10, 20, 30, 40].map((y) => ({ y, x: 0.01 * y * y - 0.5 * y + 7 }));
    const curve = fitCurve(pts, 2)!;
    expect(curve(25)).toBeCloseTo(0.01 * 625 - 12.5 + 7, 6);
    expect(fitCurve(pts.slice(0, 1), 1)).toBeNull();
  });
});

describe('marking runs', () => {
  const img = (row: number[]) => {
    const rgb = new Uint8Array(row.length * 3);
    row.forEach((v, i) => rgb.set([v, v, v], i * 3));
    return { width: row.length, height: 1, rgb };
  };
  // 200 px of road at 60 with a 3-px line at 10..12, a pair of 2-px lines at 30..31 and 35..36,
  // and a bright block at 100..159 too wide to be paint (its edges are no lines either).
  const row = Array.from({ length: 200 }, (_, x) =>
    [10, 11, 12, 30, 31, 35, 36].includes(x) ? 220 : x >= 100 && x < 160 ? 230 : 60,
  );

  it('finds the bright runs at their full extent, centres in continuous pixels', () => {
    const map = markingMap(img(row));
    expect(rowRuns(map, 0).map((r) => [r.start, r.end, r.centre])).toEqual([
      [10, 12, 11.5],
      [30, 31, 31],
      [35, 36, 36],
    ]);
    // A band cutting a run still gives the whole run.
    expect(rowRuns(map, 0, 11.2, 11.8).map((r) => r.width)).toEqual([3]);
  });

  it('takes two close runs as one double marking', () => {
    const map = markingMap(img(row));
    expect(markingNear(map, 0, 33, 6)).toMatchObject({ centre: 33.5 });
    expect(markingNear(map, 0, 33, 6)!.runs).toHaveLength(2);
    expect(markingNear(map, 0, 20, 4)).toBeNull();
  });

  it('names white and yellow paint', () => {
    expect(colourName([230 * 4, 228 * 4, 220 * 4, 4])).toBe('white');
    expect(colourName([225, 190, 40, 1])).toBe('yellow');
    expect(colourName([40, 60, 220, 1])).toBe('other');
    expect(colourName([0, 0, 0, 0])).toBeNull();
  });
});

/**
 * What the window's plot and heatmap are computed from: a signal's series decoded over a capture,
 * its min/max decimation per pixel column, and per-bit flip and set counts. The expected numbers
 * are worked out here by brute force or in closed form, not with the code under test.
 */
import { parseDbc } from '../../src/dbc/parse';
import { bitHeatmap } from '../../src/rest/heatmap';
import { decimate, decodeSeries, type Series } from '../../src/rest/plot';
import { frame } from './helpers';

/** A reproducible wandering series with bursts: uneven sample spacing, many samples per column. */
function randomSeries(n: number, seed: number): Series {
  let state = seed;
  const next = (): number => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const t = new Float64Array(n);
  const v = new Float64Array(n);
  let time = 0;
  let value = 0;
  for (let i = 0; i < n; i++) {
    time += next() < 0.1 ? next() * 0.5 : next() * 0.01;
    value += (next() - 0.5) * 4;
    t[i] = time;
    v[i] = value;
  }
  return { t, v };
}

/** Per column of [from, to], the indices of the samples that fall in it (brute force). */
function columnsOf(series: Series, from: number, to: number, columns: number): number[][] {
  const out: number[][] = Array.from({ length: columns }, () => []);
  series.t.forEach((t, i) => {
    if (t < from || t > to) return;
    out[Math.min(columns - 1, Math.floor(((t - from) / (to - from)) * columns))]!.push(i);
  });
  return out;
}

describe('decimate (M4: first, min, max and last sample per pixel column)', () => {
  const series = randomSeries(50_000, 7);
  const last = series.t[series.t.length - 1]!;

  it('keeps, in every column, its first and last sample and its lowest and highest value, in time order', () => {
    for (const [from, to, columns] of [
      [0, last, 800],
      [last * 0.3, last * 0.31, 500],
      [last * 0.5, last * 0.9, 1],
    ] as const) {
      const out = decimate(series, from, to, columns);
      const expected = columnsOf(series, from, to, columns);
      expect(out.inView).toBe(expected.flat().length);
      expect(out.t.length).toBeLessThanOrEqual(4 * columns + 2);
      // Every kept point is a sample of the series, and time never runs backwards.
      for (let k = 0; k < out.t.length; k++) {
        if (k > 0) expect(out.t[k]!).toBeGreaterThanOrEqual(out.t[k - 1]!);
      }
      const byTime = new Map<number, number>();
      series.t.forEach((t, i) => byTime.set(t, series.v[i]!));
      out.t.forEach((t, k) => expect(byTime.get(t)).toBe(out.v[k]));
      const kept = columnsOf({ t: Float64Array.from(out.t), v: Float64Array.from(out.v) }, from, to, columns);
      expected.forEach((indices, c) => {
        const values = indices.map((i) => series.v[i]!);
        const keptValues = kept[c]!.map((k) => out.v[k]!);
        if (indices.length === 0) return expect(keptValues).toEqual([]);
        expect(Math.min(...keptValues)).toBe(Math.min(...values));
        expect(Math.max(...keptValues)).toBe(Math.max(...values));
        expect(out.t[kept[c]![0]!]).toBe(series.t[indices[0]!]);
        expect(out.t[kept[c]!.at(-1)!]).toBe(series.t[indices.at(-1)!]);
      });
      expect(out.decimated).toBe(expected.some((indices) => indices.length > 4));
    }
  });

  it('brings the samples just outside the view, so the line reaches both edges', () => {
    const from = last * 0.4;
    const to = last * 0.6;
    const out = decimate(series, from, to, 300);
    const before = series.t.findLastIndex((t) => t < from);
    const after = series.t.findIndex((t) => t > to);
    expect([out.t[0], out.v[0]]).toEqual([series.t[before], series.v[before]]);
    expect([out.t.at(-1), out.v.at(-1)]).toEqual([series.t[after], series.v[after]]);
  });

  it('gives back every sample in view when no column holds more than four', () => {
    const sparse: Series = {
      t: Float64Array.from([0, 1, 2, 3, 4, 5]),
      v: Float64Array.from([5, 3, 8, 1, 9, 2]),
    };
    expect(decimate(sparse, 1, 4, 3)).toEqual({
      t: [0, 1, 2, 3, 4, 5],
      v: [5, 3, 8, 1, 9, 2],
      inView: 4,
      decimated: false,
    });
    expect(decimate(sparse, 10, 20, 100)).toEqual({ t: [5], v: [2], inView: 0, decimated: false });
    expect(decimate({ t: new Float64Array(), v: new Float64Array() }, 0, 1, 10)).toEqual({
      t: [],
      v: [],
      inView: 0,
      decimated: false,
    });
  });

  it('reduces a long capture to at most four samples per column', () => {
    const big = randomSeries(300_000, 3);
    const out = decimate(big, big.t[0]!, big.t[big.t.length - 1]!, 1000);
    expect(out.inView).toBe(300_000);
    expect(out.decimated).toBe(true);
    expect(out.t.length).toBeLessThanOrEqual(4000);
    expect(Math.max(...out.v)).toBe(big.v.reduce((a, b) => Math.max(a, b)));
    expect(Math.min(...out.v)).toBe(big.v.reduce((a, b) => Math.min(a, b)));
  });
});

describe('decodeSeries', () => {
  const db = parseDbc(
    [
      'VERSION ""',
      'BO_ 256 MUXED: 8 X',
      ' SG_ SEL M : 0|2@1+ (1,0) [0|3] "" X',
      ' SG_ A m0 : 8|8@1+ (0.5,-10) [0|0] "km/h" X',
      ' SG_ B m1 : 15|16@0- (1,0) [0|0] "" X',
      'BO_ 2147484160 EXT: 4 X',
      ' SG_ F : 0|32@1- (1,0) [0|0] "" X',
      'SIG_VALTYPE_ 2147484160 F : 1;',
      '',
    ].join('\n'),
  );
  const [muxed, ext] = db.messages as [(typeof db.messages)[0], (typeof db.messages)[0]];

  it('decodes through the DBC, only where the multiplexer selects the signal, sorted by time', () => {
    const frames = [
      frame(0.3, 0x100, [0, 40, 0, 0, 0, 0, 0, 0]),
      frame(0.1, 0x100, [0, 100, 0, 0, 0, 0, 0, 0]),
      frame(0.2, 0x100, [1, 0xff, 0xfe, 0, 0, 0, 0, 0]),
      frame(0.4, 0x100, [0, 0], {}),
      frame(0.5, 0x100, [0, 60, 0, 0, 0, 0, 0, 0], { error: true }),
      frame(0.6, 0x100, [0, 60, 0, 0, 0, 0, 0, 0], { remote: true }),
      frame(0.7, 0x100, [0, 60, 0, 0, 0, 0, 0, 0], { extended: true }),
      frame(0.8, 0x101, [0, 60, 0, 0, 0, 0, 0, 0]),
      frame(0.9, 0x100, [0, 2, 0, 0, 0, 0, 0, 0]),
    ];
    // A: raw byte 1 × 0.5 − 10, in mux 0 frames only; the 2-byte frame still carries byte 1.
    expect(decodeSeries(frames, { ...db, messages: [muxed] }, 'A')).toEqual({
      t: Float64Array.from([0.1, 0.3, 0.4, 0.9]),
      v: Float64Array.from([40, 10, -10, -9]),
    });
    // B: Motorola, signed, MSB at bit 15 (byte 1's top bit) over bytes 1-2: 0xFFFE = -2.
    expect(decodeSeries(frames, { ...db, messages: [muxed] }, 'B')).toEqual({
      t: Float64Array.from([0.2]),
      v: Float64Array.from([-2]),
    });
  });

  it('takes extended ids apart from standard ones and leaves out values that are not numbers', () => {
    const float = (x: number): number[] => [...new Uint8Array(Float32Array.from([x]).buffer)];
    const frames = [
      frame(1, 0x200, float(1.5), { extended: true }),
      frame(2, 0x200, float(1.5)),
      frame(3, 0x200, float(Number.NaN), { extended: true }),
      frame(4, 0x200, float(-0.25), { extended: true }),
    ];
    expect(decodeSeries(frames, { ...db, messages: [ext] }, 'F')).toEqual({
      t: Float64Array.from([1, 4]),
      v: Float64Array.from([1.5, -0.25]),
    });
  });
});

describe('bitHeatmap', () => {
  it("counts each bit's flips between consecutive frames and its set frames: a counter halves bit by bit", () => {
    const n = 600;
    const frames = Array.from({ length: n }, (_, i) =>
      frame(i / 100, 0x321, [i & 0xff, 0xa5, i < 300 ? 0 : 1]),
    );
    const map = bitHeatmap(frames, 0x321, false);
    expect(map.frames).toBe(n);
    expect(map.length).toBe(3);
    expect(map.byteFrames).toEqual([n, n, n]);
    expect(map.bytePairs).toEqual([n - 1, n - 1, n - 1]);
    for (let k = 0; k < 8; k++) {
      // Bit k of a counter changes from i-1 to i exactly when 2^k divides i; wrap-around at 256 included.
      expect(map.flips[k]).toBe(Math.floor((n - 1) / 2 ** k));
      expect(map.sets[k]).toBe(
        Array.from({ length: n }, (_, i) => (i & 0xff) >> k).filter((x) => x & 1).length,
      );
    }
    // 0xA5 never changes; its set bits are set in every frame.
    expect(map.flips.slice(8, 16)).toEqual([0, 0, 0, 0, 0, 0, 0, 0]);
    expect(map.sets.slice(8, 16)).toEqual([n, 0, n, 0, 0, n, 0, n]);
    // A flag raised once: one flip, set in the second half.
    expect([map.flips[16], map.sets[16]]).toEqual([1, 300]);
  });

  it('counts a byte only in frames and pairs of frames that carry it', () => {
    const frames = [
      frame(0, 0x10, [1, 2, 3, 4, 5, 6, 7, 8]),
      frame(1, 0x10, [0, 2, 3, 4]),
      frame(2, 0x10, [1, 2, 3, 4, 5, 0xff, 7, 8]),
      frame(3, 0x10, [1, 2, 3, 4, 5, 0, 7, 8]),
      frame(4, 0x10, [9, 9], { error: true }),
      frame(5, 0x10, [9, 9], { remote: true }),
      frame(6, 0x10, [9, 9], { extended: true }),
      frame(7, 0x11, [9, 9]),
    ];
    const map = bitHeatmap(frames, 0x10, false);
    expect(map.frames).toBe(4);
    expect(map.byteFrames).toEqual([4, 4, 4, 4, 3, 3, 3, 3]);
    expect(map.bytePairs).toEqual([3, 3, 3, 3, 1, 1, 1, 1]);
    expect(map.flips[0]).toBe(2);
    expect(map.flips.slice(40, 48)).toEqual([1, 1, 1, 1, 1, 1, 1, 1]);
    expect(bitHeatmap(frames, 0x10, true)).toMatchObject({ frames: 1, length: 2, bytePairs: [0, 0] });
    expect(bitHeatmap(frames, 0x12, false)).toEqual({
      frames: 0,
      length: 0,
      byteFrames: [],
      bytePairs: [],
      flips: [],
      sets: [],
    });
  });
});

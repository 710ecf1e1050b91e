import { ctcDecode, parseDictionary } from './ctc';
import { lineMargin, planarBgr, recInputWidth, regionScale } from './geometry';
import { plateShape } from './plate';

const onehot = (steps: number[], classes: number) => {
  const p = new Float32Array(steps.length * classes);
  steps.forEach((c, t) => (p[t * classes + c] = 0.9));
  return p;
};

test('the dictionary gains the trailing space class and drops the empty last line', () => {
  expect(parseDictionary('a\nb\n')).toEqual(['a', 'b', ' ']);
});

test('CTC collapses repeats, splits them on blanks and averages emitted probabilities', () => {
  const charset = ['A', 'B', ' '];
  const read = ctcDecode(onehot([1, 1, 0, 1, 2, 3, 2], 4), 7, 4, charset);
  expect(read.text).toBe('AAB B');
  expect(read.confidence).toBeCloseTo(0.9);
  expect(ctcDecode(onehot([0, 0], 4), 2, 4, charset)).toEqual({ text: '', confidence: 0 });
  expect(() => ctcDecode(onehot([0], 5), 1, 5, charset)).toThrow(/5 classes/);
});

test('plate rules: plate lines pass, words and odd shapes do not', () => {
  expect(plateShape('KA 05 MN-4321', [0, 0, 180, 20])).toMatchObject({
    plate: true,
    normalized: 'KA05MN4321',
  });
  expect(plateShape('emisiones', [0, 0, 140, 30]).reasons).toEqual(['no digit']);
  expect(plateShape('AB12', [0, 0, 20, 20]).plate).toBe(false);
  expect(plateShape('AB12 CDE 3456', [0, 0, 200, 30]).plate).toBe(false);
  expect(plateShape('AB#12', [0, 0, 90, 30]).plate).toBe(false);
});

test('crop geometry: small regions grow up to the cap, large ones shrink to the target', () => {
  expect(regionScale(160, 40, 640, 4)).toBe(4);
  expect(regionScale(320, 100, 640, 4)).toBe(2);
  expect(regionScale(1280, 400, 640, 4)).toBe(0.5);
  expect(recInputWidth(100, 24, 320)).toBe(200);
  expect(recInputWidth(1000, 10, 320)).toBe(320);
  expect(lineMargin([10, 10, 110, 30])).toEqual([7, 9, 113, 31]);
});

test('planar BGR puts blue first and normalises each channel', () => {
  const out = planarBgr(new Uint8Array([255, 0, 51]), 1, 1, [0, 0, 0], [1, 1, 1]);
  expect(Array.from(out)).toEqual([Math.fround(0.2), 0, 1]);
});

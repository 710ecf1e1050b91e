import { sampleWithoutReplacement, seededRandom, shuffle } from './random';

const draws = (r: () => number, n: number) => Array.from({ length: n }, r);

describe('seeded randomness', () => {
  it('repeats a stream exactly and keeps streams apart', () => {
    expect(draws(seededRandom(4, 1, 7), 5)).toEqual(draws(seededRandom(4, 1, 7), 5));
    expect(draws(seededRandom(4, 1, 7), 5)).not.toEqual(draws(seededRandom(4, 1, 8), 5));
    expect(draws(seededRandom(4, 1, 7), 5)).not.toEqual(draws(seededRandom(5, 1, 7), 5));
    for (const v of draws(seededRandom(9), 1000)) expect(v >= 0 && v < 1).toBe(true);
  });

  it('shuffles into a permutation, the same one for the same stream', () => {
    const a = shuffle([...Array(50).keys()], seededRandom(1, 2));
    expect([...a].sort((x, y) => x - y)).toEqual([...Array(50).keys()]);
    expect(a).toEqual(shuffle([...Array(50).keys()], seededRandom(1, 2)));
    expect(a).not.toEqual([...Array(50).keys()]);
  });

  it('samples distinct items in their original order, or all of them', () => {
    const items = [...Array(30).keys()].map((i) => i * 10);
    const picked = sampleWithoutReplacement(items, 8, seededRandom(3));
    expect(new Set(picked).size).toBe(8);
    expect(picked).toEqual([...picked].sort((x, y) => x - y));
    for (const p of picked) expect(items).toContain(p);
    expect(sampleWithoutReplacement(items, 99, seededRandom(3))).toEqual(items);
  });
});

import type { OddAttribute } from './attributes';
import { parseClique } from './clique';
import { discover, expectedFrames, rankPriority, type Marginals } from './coverage';

const marginals = (
  total: number,
  values: Partial<Record<OddAttribute, Record<string, number>>>,
): Marginals => ({
  total,
  byAttribute: new Map(
    Object.entries(values).map(([a, v]) => [a as OddAttribute, new Map(Object.entries(v))] as const),
  ),
});

const m = marginals(100, {
  lighting: { normal: 80, dark: 20 },
  weather: { clear: 90, rain: 10 },
});

describe('expected frames', () => {
  it('multiplies the marginal shares', () => {
    expect(expectedFrames(m, parseClique('lighting=dark|weather=rain', 'c'))).toBeCloseTo(2, 12);
  });
});

describe('priority', () => {
  it('ranks by coverage × bandit × rarity and explains each term', () => {
    const cliques = [
      'lighting=normal|weather=clear',
      'lighting=dark|weather=rain',
      'lighting=dark|weather=clear',
    ].map((name, i) => ({
      clique: name,
      parts: parseClique(name, 'c'),
      frames: [72, 2, 18][i]!,
      objects: 0,
    }));
    const ranked = rankPriority(cliques, m, new Map(), 100);
    expect(ranked.map((r) => r.clique)).toEqual([
      'lighting=dark|weather=rain',
      'lighting=dark|weather=clear',
      'lighting=normal|weather=clear',
    ]);
    expect(ranked[0]).toMatchObject({
      rank: 1,
      terms: { coverage: 1 / 1.02, bandit: 0.5, rarity: 0.9 },
      inputs: { rarest_value: { attribute: 'weather', value: 'rain', share: 0.1 } },
    });
    expect(ranked[0]!.score).toBeCloseTo((1 / 1.02) * 0.5 * 0.9, 12);
    // A bandit that saw gains on a well-covered clique lifts it.
    const lifted = rankPriority(
      cliques,
      m,
      new Map([['lighting=normal|weather=clear', { alpha: 40, beta: 1, observations: 4 }]]),
    );
    const entry = (list: typeof ranked) => list.find((r) => r.clique === 'lighting=normal|weather=clear')!;
    expect(entry(lifted).terms.bandit).toBeCloseTo(40 / 41, 12);
    expect(entry(lifted).score).toBeGreaterThan(entry(ranked).score);
    expect(entry(lifted).reason).toMatch(/4 observed rewards/);
  });
});

describe('discover', () => {
  it('finds unseen vocabulary values, absent pairs and under-represented pairs', () => {
    const pairs = new Map([
      ['lighting=normal|weather=clear', 80],
      ['lighting=dark|weather=clear', 10],
      ['lighting=dark|weather=rain', 10],
    ]);
    const d = discover(m, ['lighting', 'weather'], pairs, { minShare: 0.15, limit: 10 });
    expect(d.unseen_values).toEqual(
      expect.arrayContaining([
        { attribute: 'lighting', value: 'bright' },
        { attribute: 'weather', value: 'snow' },
        { attribute: 'weather', value: 'fog' },
      ]),
    );
    expect(d.unseen_values).not.toContainEqual({ attribute: 'weather', value: 'rain' });
    expect(d.absent).toEqual([
      { clique: 'lighting=normal|weather=rain', expected_frames: expect.closeTo(8, 9) },
    ]);
    expect(d.under_represented.map((u) => u.clique)).toEqual([
      'lighting=dark|weather=clear',
      'lighting=dark|weather=rain',
    ]);
    expect(d.under_represented[0]).toMatchObject({
      frames: 10,
      share: 0.1,
      lift: expect.closeTo(10 / 18, 9),
    });
  });
});

import {
  allocateBudget,
  BANDIT_PRIOR,
  FULL_GAIN,
  largestRemainder,
  MAX_TRIALS_PER_REWARD,
  MAX_UNITS,
  observe,
  updateArm,
} from './bandit';

const prior = (clique: string) => ({ clique, ...BANDIT_PRIOR });

describe('observe', () => {
  it('observes nothing without both recalls', () => {
    expect(observe(100, null, 0.5)).toMatchObject({
      observed: false,
      reason: expect.stringMatching(/recall_before/),
    });
    expect(observe(100, 0.5, null)).toMatchObject({
      observed: false,
      reason: expect.stringMatching(/recall_after/),
    });
    expect(updateArm(prior('a'), observe(100, null, null))).toEqual(prior('a'));
  });

  it('scales the gain per 100 labels to a success in [0, 1]', () => {
    // 2.5 recall points on 100 labels: half of FULL_GAIN.
    expect(observe(100, 0.5, 0.5 + FULL_GAIN / 2)).toMatchObject({
      observed: true,
      reward: expect.closeTo(0.5, 12),
      trials: 1,
    });
    // The same gain on 200 labels is half as good per label.
    expect(observe(200, 0.5, 0.5 + FULL_GAIN / 2)).toMatchObject({
      reward: expect.closeTo(0.25, 12),
      trials: 2,
    });
    expect(observe(50, 0.1, 0.9)).toMatchObject({ reward: 1, trials: 0.5 });
    expect(observe(100, 0.6, 0.5)).toMatchObject({ reward: 0, gain: expect.closeTo(-0.1, 12) });
    expect(observe(100_000, 0.5, 0.6)).toMatchObject({ trials: MAX_TRIALS_PER_REWARD });
  });

  it('updates the Beta posterior fractionally', () => {
    const arm = updateArm(prior('a'), observe(300, 0.5, 0.5 + 3 * FULL_GAIN * 0.4));
    expect(arm.alpha).toBeCloseTo(1 + 3 * 0.4, 12);
    expect(arm.beta).toBeCloseTo(1 + 3 * 0.6, 12);
  });
});

describe('largestRemainder', () => {
  it('sums to the total in proportion, ties to the first', () => {
    expect(largestRemainder([1, 1, 1], 10)).toEqual([4, 3, 3]);
    expect(largestRemainder([3, 1], 8)).toEqual([6, 2]);
    expect(largestRemainder([0, 0], 5)).toEqual([0, 0]);
  });
});

describe('allocateBudget', () => {
  const arms = [prior('weather=rain|lighting=dark'), prior('b'), prior('c')];

  it('spends exactly the budget, reproducibly from the seed', () => {
    const a = allocateBudget(arms, 500, 42);
    expect(a.allocations.reduce((s, x) => s + x.labels, 0)).toBe(500);
    expect(a.units).toBe(500);
    expect(allocateBudget(arms, 500, 42)).toEqual(a);
    expect(allocateBudget(arms, 5000, 1).units).toBe(MAX_UNITS);
  });

  it('splits evenly-ish under equal priors and moves toward a rewarded arm', () => {
    const before = allocateBudget(arms, 900, 5);
    for (const x of before.allocations) expect(x.labels).toBeGreaterThan(200);
    const rewarded = arms.map((arm) =>
      arm.clique === 'b' ? updateArm(arm, observe(1000, 0.4, 0.4 + 10 * FULL_GAIN)) : arm,
    );
    const after = allocateBudget(rewarded, 900, 5);
    const labels = (a: typeof after, c: string) => a.allocations.find((x) => x.clique === c)!.labels;
    expect(labels(after, 'b')).toBeGreaterThan(labels(before, 'b'));
    expect(labels(after, 'b')).toBeGreaterThan(600);
    const b = after.allocations.find((x) => x.clique === 'b')!;
    expect(b).toMatchObject({ greedy: true, exploration_labels: 0, posterior: { alpha: 11, beta: 1 } });
    expect(after.allocations[0]!.clique).toBe('b');
    for (const x of after.allocations.filter((y) => !y.greedy)) expect(x.exploration_labels).toBe(x.labels);
  });

  it('explains each allocation', () => {
    const a = allocateBudget(arms, 30, 9);
    for (const x of a.allocations) {
      expect(x.draws.of).toBe(30);
      expect(x.reason).toMatch(/posterior mean/);
    }
    expect(a.allocations.reduce((s, x) => s + x.draws.won, 0)).toBe(30);
  });
});

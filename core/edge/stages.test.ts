import { planStages, rolloutOrder, selectorMatches, stageDeviceCount, stagesProblem } from './stages';

const fleet = Array.from({ length: 20 }, (_, i) => `device-${String(i).padStart(2, '0')}`);

describe('stage planning', () => {
  it('takes the share of the fleet rounded up, at least one device and never more than the fleet', () => {
    expect([10, 50, 100].map((p) => stageDeviceCount(3, p))).toEqual([1, 2, 3]);
    expect([1, 10, 25, 100].map((p) => stageDeviceCount(20, p))).toEqual([1, 2, 5, 20]);
    // 30% of 10 is exactly 3 however the float multiplication rounds
    expect(stageDeviceCount(10, 30)).toBe(3);
    expect(stageDeviceCount(1, 5)).toBe(1);
  });

  it('plans cumulative stages: each stage holds every device of the stage before', () => {
    const plan = planStages(fleet, [10, 50, 100], 'rollout-a');
    expect(plan.map((s) => s.length)).toEqual([2, 10, 20]);
    expect(plan[1]!.slice(0, 2)).toEqual(plan[0]);
    expect(plan[2]!.slice(0, 10)).toEqual(plan[1]);
    expect(new Set(plan[2])).toEqual(new Set(fleet));
  });

  it('is deterministic per rollout and independent of the order the fleet is listed in', () => {
    const a = planStages(fleet, [10, 100], 'rollout-a');
    expect(planStages([...fleet].reverse(), [10, 100], 'rollout-a')).toEqual(a);
    // another rollout canaries another subset
    const orders = new Set(['r1', 'r2', 'r3', 'r4'].map((seed) => rolloutOrder(fleet, seed).join()));
    expect(orders.size).toBe(4);
  });

  it('refuses stage lists that do not grow to the whole fleet', () => {
    expect(stagesProblem([10, 50, 100])).toBeNull();
    expect(stagesProblem([100])).toBeNull();
    expect(stagesProblem([])).toMatch(/at least one/);
    expect(stagesProblem([50, 50, 100])).toMatch(/stage 1 \(50%\) does not grow/);
    expect(stagesProblem([0, 100])).toMatch(/stage 0 is 0%/);
    expect(stagesProblem([10, 120])).toMatch(/stage 1 is 120%/);
    expect(stagesProblem([10, 50])).toMatch(/last stage is 50%; it must be 100/);
  });

  it('matches a selector on every label it names', () => {
    expect(selectorMatches({ site: 'depot', lane: '3' }, {})).toBe(true);
    expect(selectorMatches({ site: 'depot', lane: '3' }, { site: 'depot' })).toBe(true);
    expect(selectorMatches({ site: 'depot' }, { site: 'depot', lane: '3' })).toBe(false);
    expect(selectorMatches({ site: 'yard' }, { site: 'depot' })).toBe(false);
  });
});

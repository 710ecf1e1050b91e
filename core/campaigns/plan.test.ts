import { afterEvaluation, batchBudget, needsApproval, type CampaignSettings } from './plan';

const settings: CampaignSettings = {
  labelBudget: 100,
  maxIterations: 4,
  patience: 2,
  targetValue: 0.6,
  requireApproval: true,
  autopilotStages: [],
};
const at = (iteration: number, labelsUsed = 0, bestValue: number | null = null, staleIterations = 0) => ({
  iteration,
  labelsUsed,
  bestValue,
  staleIterations,
});

describe('batchBudget', () => {
  it('spreads the remaining budget over the remaining iterations, rounding up, capped by the batch limit', () => {
    expect(batchBudget(settings, at(1), 500)).toBe(25);
    expect(batchBudget(settings, at(2, 25), 500)).toBe(25);
    expect(batchBudget(settings, at(4, 90), 500)).toBe(10);
    expect(batchBudget({ ...settings, labelBudget: 7 }, at(1), 500)).toBe(2);
    expect(batchBudget(settings, at(1), 10)).toBe(10);
  });

  it('gives nothing once the budget is spent, and the whole rest after the planned iterations', () => {
    expect(batchBudget(settings, at(3, 100), 500)).toBe(0);
    expect(batchBudget(settings, at(6, 60), 500)).toBe(40);
  });
});

describe('needsApproval', () => {
  it('waits before each training, and before routing every batch but the first', () => {
    expect(needsApproval(settings, 'train', 1)).toBe(true);
    expect(needsApproval(settings, 'select', 1)).toBe(false);
    expect(needsApproval(settings, 'select', 2)).toBe(true);
    expect(needsApproval(settings, 'review', 2)).toBe(false);
    expect(needsApproval(settings, 'evaluate', 2)).toBe(false);
  });

  it('runs autopilot stages and campaigns without approval on their own', () => {
    expect(needsApproval({ ...settings, autopilotStages: ['train'] }, 'train', 3)).toBe(false);
    expect(needsApproval({ ...settings, autopilotStages: ['train'] }, 'select', 3)).toBe(true);
    expect(needsApproval({ ...settings, requireApproval: false }, 'train', 1)).toBe(false);
  });
});

describe('afterEvaluation', () => {
  it('stops at the target, even on the last iteration and with patience left', () => {
    expect(afterEvaluation(settings, at(4, 50, 0.3), 0.6).stop).toBe('target_reached');
  });

  it('keeps going while it improves, counting stale iterations otherwise', () => {
    expect(afterEvaluation(settings, at(1), 0.2)).toEqual({ bestValue: 0.2, staleIterations: 0, stop: null });
    expect(afterEvaluation(settings, at(2, 50, 0.2), 0.2005)).toEqual({
      bestValue: 0.2,
      staleIterations: 1,
      stop: null,
    });
    expect(afterEvaluation(settings, at(3, 60, 0.2, 1), 0.1)).toEqual({
      bestValue: 0.2,
      staleIterations: 2,
      stop: 'patience',
    });
  });

  it('stops after max_iterations, and when the budget is spent', () => {
    expect(afterEvaluation(settings, at(4, 50, 0.2), 0.3).stop).toBe('max_iterations');
    expect(afterEvaluation(settings, at(2, 100, 0.2), 0.3).stop).toBe('budget_spent');
  });

  it('counts an iteration without a measurable value as no improvement', () => {
    expect(afterEvaluation(settings, at(2, 10, 0.2), null)).toEqual({
      bestValue: 0.2,
      staleIterations: 1,
      stop: null,
    });
  });
});

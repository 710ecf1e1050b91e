import type { LatencyFigures } from './latency';
import type { Budgets } from './targets';

/**
 * The edge gate (docs/edgeforge.md): an artifact against its target's budgets. Every budget is
 * checked on a figure that was measured or checked; a figure that is missing fails its budget
 * with the reason, so the gate fails closed.
 */

export interface GateFigures {
  /** The artifact's newest measured benchmark, when there is one. */
  latency: LatencyFigures | null;
  memoryMb: number | null;
  sizeBytes: number;
  /** mAP@0.5 lost against the source model on the gold set; null when never checked. */
  accuracyLoss: number | null;
}

export interface BudgetCheck {
  budget: 'latency' | 'memory' | 'size' | 'accuracy';
  limit: number;
  value: number | null;
  unit: string;
  passed: boolean;
  reason: string;
}

const MB = 1024 * 1024;

const check = (
  budget: BudgetCheck['budget'],
  limit: number,
  value: number | null,
  unit: string,
  missing: string,
): BudgetCheck => {
  if (value === null) return { budget, limit, value, unit, passed: false, reason: missing };
  const passed = value <= limit;
  const shown = Number(value.toFixed(4));
  return {
    budget,
    limit,
    value,
    unit,
    passed,
    reason: `${shown} ${unit} ${passed ? '≤' : '>'} ${limit} ${unit}`,
  };
};

export function checkBudgets(
  budgets: Budgets,
  figures: GateFigures,
): { passed: boolean; checks: BudgetCheck[] } {
  const stat = budgets.latency_stat;
  const latency = figures.latency?.[stat];
  const checks = [
    check(
      'latency',
      budgets.latency_ms,
      typeof latency === 'number' ? latency : null,
      `ms (${stat})`,
      figures.latency
        ? `the measured benchmark has no ${stat}`
        : 'no measured benchmark of this artifact (POST /api/edgeforge/benchmark?measure=true)',
    ),
    check(
      'memory',
      budgets.memory_mb,
      figures.memoryMb,
      'MB',
      'no measured memory for this artifact (POST /api/edgeforge/benchmark?measure=true)',
    ),
    check('size', budgets.size_mb, figures.sizeBytes / MB, 'MB', 'the artifact has no size'),
    check(
      'accuracy',
      budgets.accuracy_loss,
      figures.accuracyLoss,
      'mAP@0.5 lost',
      'the artifact’s accuracy was never checked against its source model',
    ),
  ];
  return { passed: checks.every((c) => c.passed), checks };
}

import type { CocoEvaluation } from './evaluate';
import { COCO_STAT_NAMES, type CocoStatName } from './params';

/**
 * What both COCO harnesses (evaluateCoco and the streaming one) compute, and their comparison:
 * two code paths that share only the IoU primitive must agree on every figure, so a bug in either's
 * matching or accumulation shows up as a divergence.
 */

/** The figures both harnesses give (bbox, 100 detections per image): every stat but AR@1 and AR@10. */
export const HEADLINE_METRICS = [
  'AP',
  'AP50',
  'AP75',
  'APsmall',
  'APmedium',
  'APlarge',
  'AR100',
  'ARsmall',
  'ARmedium',
  'ARlarge',
] as const satisfies readonly CocoStatName[];
export type HeadlineMetric = (typeof HEADLINE_METRICS)[number];

export interface HarnessMetrics {
  /** -1 where nothing was measurable, as in COCOeval.stats. */
  headline: Record<HeadlineMetric, number>;
  /** AP over IoU .50:.95 per category, ascending id; -1 for a category without ground truth. */
  perCategoryAp: { categoryId: number; ap: number }[];
}

export interface HarnessDivergence {
  /** A headline metric's name, or `AP[category <id>]`. */
  metric: string;
  primary: number | null;
  secondary: number | null;
  /** secondary − primary; null when one side lacks the metric. */
  delta: number | null;
  /** |delta| > epsilon, or the metric is missing on one side. */
  diverges: boolean;
}

export interface HarnessComparison {
  within: boolean;
  epsilon: number;
  /** Every compared metric, diverging or not. */
  divergences: HarnessDivergence[];
}

export function harnessMetricsOf(evaluation: CocoEvaluation): HarnessMetrics {
  const stat = (name: HeadlineMetric): number => evaluation.stats[COCO_STAT_NAMES.indexOf(name)]!;
  return {
    headline: Object.fromEntries(HEADLINE_METRICS.map((name) => [name, stat(name)])) as Record<
      HeadlineMetric,
      number
    >,
    perCategoryAp: evaluation.perCategory.map(({ categoryId, ap }) => ({ categoryId, ap })),
  };
}

function divergence(
  metric: string,
  primary: number | null,
  secondary: number | null,
  epsilon: number,
): HarnessDivergence {
  const delta = primary === null || secondary === null ? null : secondary - primary;
  return { metric, primary, secondary, delta, diverges: delta === null || !(Math.abs(delta) <= epsilon) };
}

/** Compares every headline metric and every category's AP of two harnesses' results. */
export function compareHarnesses(
  primary: HarnessMetrics,
  secondary: HarnessMetrics,
  epsilon: number,
): HarnessComparison {
  const divergences = HEADLINE_METRICS.map((name) =>
    divergence(name, primary.headline[name], secondary.headline[name], epsilon),
  );
  const primaryAp = new Map(primary.perCategoryAp.map((c) => [c.categoryId, c.ap]));
  const secondaryAp = new Map(secondary.perCategoryAp.map((c) => [c.categoryId, c.ap]));
  const categories = [...new Set([...primaryAp.keys(), ...secondaryAp.keys()])].sort((a, b) => a - b);
  for (const id of categories) {
    divergences.push(
      divergence(`AP[category ${id}]`, primaryAp.get(id) ?? null, secondaryAp.get(id) ?? null, epsilon),
    );
  }
  return { within: divergences.every((d) => !d.diverges), epsilon, divergences };
}

import { createHash } from 'node:crypto';
import { z } from 'zod';
import { TRAINING_PARAMS, trainingConfigIn, type TrainingConfig, type TrainingParam } from './config';

/**
 * Hyperparameter sweeps (docs/training.md): a grid of training-config values, expanded to one
 * training job per point, and the children ranked by a validation metric.
 */

/** Most points one sweep may expand to: each is a training job that queues for the one GPU slot. */
export const MAX_SWEEP_POINTS = 16;

/** Metrics a sweep ranks by, and which way is better. */
export const SWEEP_METRICS = {
  /** mAP@0.5 of the trained model on the validation split, measured by running its file. */
  map50: 'higher',
  /** Validation loss of the last epoch. */
  val_loss: 'lower',
} as const;
export type SweepMetric = keyof typeof SWEEP_METRICS;

export const GridIn = z
  .partialRecord(
    z.enum(TRAINING_PARAMS as [TrainingParam, ...TrainingParam[]]),
    z.array(z.unknown()).min(1).max(16),
  )
  .refine((g) => Object.keys(g).length > 0, 'name at least one parameter')
  .meta({ description: 'training-config parameter → the values to try; the sweep runs every combination' });
export type Grid = z.infer<typeof GridIn>;

export type GridExpansion =
  | { ok: true; points: Array<{ values: Partial<TrainingConfig>; config: TrainingConfig }> }
  | { ok: false; errors: Array<{ field: string; message: string }> };

/**
 * Every combination of the grid over the base config, in a fixed order (parameters by name, values
 * as given), each checked against the training-config schema. A value the schema refuses, a
 * repeated value and a grid over MAX_SWEEP_POINTS are named field by field.
 */
export function expandGrid(base: TrainingConfig, grid: Grid): GridExpansion {
  const params = (Object.keys(grid) as TrainingParam[]).sort();
  const point = trainingConfigIn(base);
  const errors: Array<{ field: string; message: string }> = [];
  for (const p of params) {
    const values = grid[p]!;
    const seen = new Set(values.map((v) => JSON.stringify(v)));
    if (seen.size !== values.length) errors.push({ field: `grid.${p}`, message: 'a value is repeated' });
    values.forEach((v, i) => {
      const parsed = point.safeParse({ [p]: v });
      if (!parsed.success)
        errors.push(
          ...parsed.error.issues.map((issue) => ({ field: `grid.${p}.${i}`, message: issue.message })),
        );
    });
  }
  const count = params.reduce((n, p) => n * grid[p]!.length, 1);
  if (count > MAX_SWEEP_POINTS)
    errors.push({
      field: 'grid',
      message: `${count} combinations; a sweep runs at most ${MAX_SWEEP_POINTS}`,
    });
  if (errors.length) return { ok: false, errors };
  let points: Array<Partial<TrainingConfig>> = [{}];
  for (const p of params) points = points.flatMap((pt) => grid[p]!.map((v) => ({ ...pt, [p]: v })));
  return {
    ok: true,
    points: points.map((values) => ({ values, config: point.parse(values) })),
  };
}

export interface SweepChild {
  jobId: string;
  status: string;
  /** The child's value of the sweep's metric; null while it has none (not finished, failed). */
  value: number | null;
}

/**
 * Children best first by the metric. Only completed children with a value are ranked (rank 1 is
 * best); the others follow unranked, in the order given. Equal values keep the order given.
 */
export function rankSweep<T extends SweepChild>(
  children: readonly T[],
  metric: SweepMetric,
): Array<T & { rank: number | null }> {
  const sign = SWEEP_METRICS[metric] === 'higher' ? -1 : 1;
  const ranked = children
    .map((c, i) => ({ c, i }))
    .filter(({ c }) => c.status === 'completed' && c.value !== null && Number.isFinite(c.value))
    .sort((a, b) => sign * (a.c.value! - b.c.value!) || a.i - b.i)
    .map(({ c }, k) => ({ ...c, rank: k + 1 }));
  const rankedIds = new Set(ranked.map((c) => c.jobId));
  return [...ranked, ...children.filter((c) => !rankedIds.has(c.jobId)).map((c) => ({ ...c, rank: null }))];
}

/**
 * The job id of a sweep's child at grid point `index`: derived from the sweep and the point, so a
 * retried planning step finds the children it made instead of making more.
 */
export function sweepChildId(sweepId: string, index: number): string {
  const h = createHash('sha256').update(`${sweepId}:${index}`).digest('hex');
  // Version 5 and the RFC 4122 variant, so the id is a well-formed UUID.
  const variant = ((parseInt(h[16]!, 16) & 0x3) | 0x8).toString(16);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${variant}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** A child's value of the metric: its trained model's validation mAP@0.5, or its last epoch's validation loss. */
export function sweepValue(metric: SweepMetric, job: { metrics: unknown; progress: unknown }): number | null {
  const value =
    metric === 'map50'
      ? (job.metrics as { trained?: { map50?: unknown } } | null)?.trained?.map50
      : (job.progress as { val_loss?: unknown } | null)?.val_loss;
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

import { z } from 'zod';
import { commitIdSchema } from '../../../activities/datasets/read';
import { TrainingConfigIn } from '../../../activities/training/trainers';
import {
  COMPUTE_TARGETS,
  FINISHED_STATUSES,
  TRAINERS,
  TRAINING_STATUSES,
} from '../../../core/training-jobs/config';
import { GridIn, SWEEP_METRICS, type SweepMetric } from '../../../core/training-jobs/sweep';

/** Bodies and queries of the training group (the spec names the routes only; docs/training.md). */

const modelVersion = z.string().trim().min(1).max(200);
const task = z
  .string()
  .trim()
  .min(1)
  .max(64)
  .default('detection')
  .meta({ description: 'detection (2D boxes); 3D and any other task are refused by name' });

export const TrainingStartIn = z.strictObject({
  dataset_commit_id: commitIdSchema.meta({
    description: 'the dataset commit to train on: COCO train and val splits, with images',
  }),
  parent_model_version: modelVersion
    .nullable()
    .default(null)
    .meta({ description: 'the model to fine-tune; null: the current champion' }),
  name: z.string().trim().min(1).max(200).nullable().default(null),
  task,
  trainer: z.enum(TRAINERS).default('head-finetune').meta({
    description: 'head-finetune (built in, CPU) or external (the configured command or endpoint)',
  }),
  compute_target: z.enum(COMPUTE_TARGETS).default('local').meta({
    description: 'local: the GPU slot of this installation; cloud: the connected cloud GPU session',
  }),
  config: TrainingConfigIn.prefault({}),
});

/** A sweep's name is its handle in paths and job names. */
export const SweepName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/, 'letters, digits, dot, dash and underscore, at most 100');

export const TrainingSweepIn = z.strictObject({
  name: SweepName,
  dataset_commit_id: commitIdSchema,
  parent_model_version: modelVersion
    .nullable()
    .default(null)
    .meta({ description: 'null: the current champion' }),
  task,
  config: TrainingConfigIn.prefault({}).meta({
    description: 'what every child shares; the grid overrides it',
  }),
  grid: GridIn,
  metric: z
    .enum(Object.keys(SWEEP_METRICS) as [SweepMetric, ...SweepMetric[]])
    .default('map50')
    .meta({ description: 'map50 (higher is better) or val_loss (lower is better)' }),
});

const page = {
  limit: z.coerce.number().int().min(1).max(200).default(50),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
};

export const TrainingListQuery = z.strictObject({
  status: z.enum(TRAINING_STATUSES).optional(),
  sweep_name: SweepName.optional(),
  dataset_commit_id: commitIdSchema.optional(),
  ...page,
});

/** A run is a job that has started: running or finished. */
export const RUN_STATUSES = ['running', ...FINISHED_STATUSES] as const;

export const TrainingRunsQuery = TrainingListQuery.extend({ status: z.enum(RUN_STATUSES).optional() });

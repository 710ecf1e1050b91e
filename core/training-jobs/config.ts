import { z } from 'zod';

/**
 * What a training job asks for (docs/training.md). The spec names the routes but not their
 * fields; these are the project's choices, shared by the start route, the sweep route and the
 * trainers.
 */

/** The one task this installation trains; every other task is refused by name. */
export const TRAINABLE_TASKS = ['detection'] as const;
export type TrainableTask = (typeof TRAINABLE_TASKS)[number];

/**
 * Why a task cannot be trained here, or null when it can. 3D training (cuboids, LiDAR) is refused
 * by name, as the spec's Errors require; any other task is refused naming the one that trains.
 */
export function taskRefusal(task: string): string | null {
  if ((TRAINABLE_TASKS as readonly string[]).includes(task)) return null;
  if (/3d|cuboid|lidar|point.?cloud/i.test(task))
    return `3D training is refused: task ${JSON.stringify(task)} needs a 3D detector and trainer, and this installation trains the 2D closed-set detector only`;
  return `task ${JSON.stringify(task)} cannot be trained here: only ${TRAINABLE_TASKS.join(', ')} (2D boxes) can`;
}

export const TRAINERS = ['head-finetune', 'external'] as const;
export type Trainer = (typeof TRAINERS)[number];

export const COMPUTE_TARGETS = ['local', 'cloud'] as const;
export type ComputeTarget = (typeof COMPUTE_TARGETS)[number];

export const HEADS = ['cls', 'obj'] as const;

/** The training configuration's fields and their bounds, without defaults. */
const configFields = {
  epochs: z.int().min(1).max(10_000).meta({
    description: 'passes over the train split (at most APP_TRAINING__MAX_EPOCHS)',
  }),
  learning_rate: z.number().gt(0).max(10),
  batch_size: z.int().min(1).max(65_536).meta({ description: 'anchor samples per optimisation step' }),
  heads: z
    .array(z.enum(HEADS))
    .min(1)
    .max(HEADS.length)
    .refine((h) => new Set(h).size === h.length, 'each head once')
    .meta({ description: 'which 1×1 prediction convolutions learn: class scores (cls), objectness (obj)' }),
  anchor_l2: z.number().min(0).max(1000).meta({
    description: "L2 pull toward the parent's weights, so classes absent from the data are not forgotten",
  }),
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1),
};

/** A complete training configuration, as stored on the job (snake_case, like the API). */
export const TrainingConfigSchema = z.strictObject(configFields);
export type TrainingConfig = z.infer<typeof TrainingConfigSchema>;
export type TrainingParam = keyof TrainingConfig;
export const TRAINING_PARAMS = Object.keys(configFields) as TrainingParam[];

/**
 * The configuration a request may give in part: each field it leaves out takes its value from
 * `defaults` (the built-in trainer's defaults for a job, the sweep's base for a grid point).
 */
export function trainingConfigIn(defaults: TrainingConfig) {
  const f = configFields;
  return z.strictObject({
    epochs: f.epochs.default(defaults.epochs),
    learning_rate: f.learning_rate.default(defaults.learning_rate),
    batch_size: f.batch_size.default(defaults.batch_size),
    heads: f.heads.default(defaults.heads),
    anchor_l2: f.anchor_l2.default(defaults.anchor_l2),
    seed: f.seed.default(defaults.seed),
  });
}

/** Most images one split may hold: the built-in trainer keeps a split's pictures in memory. */
export const MAX_SPLIT_IMAGES = 5000;

/**
 * The model version a job registers: `trained-<job_id>`. Derived from the job alone, so a retried
 * attempt registers the same version rather than a second one, and the version leads back to its
 * job (and from there to its dataset commit and parent).
 */
export const trainedModelVersion = (jobId: string): string => `trained-${jobId}`;

/** Statuses after which a job never changes again. */
export const FINISHED_STATUSES = ['completed', 'failed', 'cancelled'] as const;
export const TRAINING_STATUSES = ['queued', 'queued-cloud', 'running', ...FINISHED_STATUSES] as const;
export type TrainingStatus = (typeof TRAINING_STATUSES)[number];

export const isFinished = (status: string): boolean =>
  (FINISHED_STATUSES as readonly string[]).includes(status);

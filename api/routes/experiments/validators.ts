import { z } from 'zod';
import { COMPARE_MAX_RUNS } from '../../../activities/experiments/experiments';
import { RELIABILITY_DEFAULTS } from '../../../core/registry';
import { DEFAULT_TRACKER_SETTINGS, TrackerSettings } from '../../../core/tracking';
import { BOOTSTRAP_DEFAULTS } from '../../../core/quality/stats';
import { limitParam } from '../../http/session-reads';
import { ModelVersionIn } from '../models/validators';

/** Bodies and queries of the experiments group (the spec gives AttachIn; docs/experiments.md). */

export const ExperimentName = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/, 'letters, digits, dots, dashes and underscores; at most 128')
  .meta({ description: 'the experiment’s unique name, as its path names it' });

export const ExperimentIn = z.strictObject({
  name: ExperimentName,
  description: z.string().max(4000).nullable().default(null),
});

/** Spec AttachIn. */
export const AttachIn = z.strictObject({
  job_id: z.string().min(1).max(200).meta({ description: 'the training job attached as a run' }),
  baseline_run_id: z
    .string()
    .min(1)
    .max(200)
    .nullable()
    .default(null)
    .meta({ description: 'a run of this experiment this one is measured against' }),
  label: z.string().max(200).nullable().default(null),
  notes: z.string().max(4000).nullable().default(null),
});

export const ExperimentsQuery = z.strictObject({
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

export const CompareQuery = z.strictObject({
  run_ids: z
    .string()
    .max(COMPARE_MAX_RUNS * 37)
    .transform((v) => v.split(',').map((s) => s.trim()))
    .pipe(
      z
        .array(z.uuid({ error: 'run ids are UUIDs' }))
        .min(2, 'name at least two runs')
        .max(COMPARE_MAX_RUNS)
        .refine((ids) => new Set(ids).size === ids.length, 'a run is named twice'),
    )
    .meta({ description: 'experiment run ids, comma-separated; the first is the baseline of the deltas' }),
});

const probability = z.coerce.number().gt(0).lt(1);

export const FalseNegativesQuery = z.strictObject({
  model_version: ModelVersionIn,
  gold_id: z.uuid(),
  run_id: z
    .uuid()
    .optional()
    .meta({ description: 'a completed run of the model; default: its latest on the gold set' }),
  iou: z.coerce.number().gt(0).max(1).default(0.5),
  conf_thr: z.coerce.number().min(0).max(1).default(0.5),
  limit: limitParam(100, 1000).meta({ description: 'missed objects listed, over every class' }),
});

export const RecallReliabilityIn = z.strictObject({
  model_version: ModelVersionIn,
  gold_id: z.uuid(),
  run_id: z.uuid().optional(),
  iou_thr: z.number().gt(0).max(1).default(0.5),
  conf_thr: z.number().min(0).max(1).default(0.5),
  alpha: probability.default(BOOTSTRAP_DEFAULTS.alpha),
  n_boot: z.int().min(100).max(20_000).default(BOOTSTRAP_DEFAULTS.nBoot),
  seed: z
    .int()
    .min(0)
    .max(2 ** 32 - 1)
    .default(BOOTSTRAP_DEFAULTS.seed),
  min_sample: z.int().min(1).max(100_000).default(RELIABILITY_DEFAULTS.minSample),
  max_width: z.number().gt(0).max(1).default(RELIABILITY_DEFAULTS.maxWidth),
});

export const TrackingIn = z.strictObject({
  session_id: z
    .uuid()
    .meta({ description: 'the session (one camera sequence) whose human tracks are the ground truth' }),
  run_id: z.uuid().meta({
    description:
      "a completed inference run; its boxes on the session's frames are tracked with the platform's tracker and scored",
  }),
  settings: TrackerSettings.default(DEFAULT_TRACKER_SETTINGS).meta({
    description: 'ByteTrack settings for tracking the run; absent fields keep their defaults',
  }),
  class_name: z.string().min(1).max(128).nullable().default(null).meta({
    description:
      'score only this class (ground truth and run alike); null: every class, matched class-agnostically',
  }),
});

import { z } from 'zod';
import { MEASURE_DEFAULTS } from '../../../core/quality/gold-measure';
import { GOLD_MAX_OBJECTS } from '../../../core/quality/gold';
import { booleanParam } from '../../http/session-reads';

/** Bodies and queries of the quality routes (docs/quality.md). */

export const GoldSealIn = z
  .strictObject({
    name: z.string().trim().min(1).max(200),
    note: z.string().max(4000).nullish(),
    object_ids: z.array(z.uuid()).min(1).max(GOLD_MAX_OBJECTS).optional(),
    frame_ids: z.array(z.uuid()).min(1).max(GOLD_MAX_OBJECTS).optional(),
    session_id: z.uuid().optional(),
  })
  .meta({
    description:
      'exactly one of object_ids (every accepted object of their frames), frame_ids, or session_id (its human-verified frames)',
  });

export const GoldSetsQuery = z.strictObject({
  verify: booleanParam
    .default(false)
    .meta({ description: "recompute each set's content hash from its frozen items and report `intact`" }),
});

/** Defaults of the spec's BootstrapIn. */
export const bootstrapOptions = {
  alpha: z.number().gt(0).lt(1).default(MEASURE_DEFAULTS.alpha),
  n_boot: z.int().min(100).max(20_000).default(MEASURE_DEFAULTS.n_boot),
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(MEASURE_DEFAULTS.seed),
};

export const GoldMeasureIn = z.strictObject({
  run_id: z.uuid().meta({ description: 'the inference run measured (POST /api/inference-runs)' }),
  iou_thr: z.number().gt(0).max(1).default(MEASURE_DEFAULTS.iou_thr),
  ...bootstrapOptions,
});

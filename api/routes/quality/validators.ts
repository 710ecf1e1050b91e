import { z } from 'zod';
import { MEASURE_DEFAULTS } from '../../../core/quality/gold-measure';
import { GOLD_MAX_OBJECTS } from '../../../core/quality/gold';
import { bootstrapOptions } from '../../http/bootstrap-options';
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

export const GoldMeasureIn = z.strictObject({
  run_id: z.uuid().meta({ description: 'the inference run measured (POST /api/inference-runs)' }),
  iou_thr: z.number().gt(0).max(1).default(MEASURE_DEFAULTS.iou_thr),
  ...bootstrapOptions,
});

// ---- Agreement, calibration, sheet (docs/quality-measure.md) ----

export const IaaIn = z
  .strictObject({
    session_id: z.uuid().optional(),
    frame_ids: z.array(z.uuid()).min(1).max(10_000).optional(),
    iou_thr: z.number().gt(0).max(1).default(0.5),
    annotator_by: z.enum(['creator', 'job']).default('creator').meta({
      description:
        "who an object's annotator is: `creator`, the user its object.created audit entry names; `job`, its job_id",
    }),
    annotators: z
      .array(z.string().trim().min(1).max(200))
      .min(2)
      .max(100)
      .optional()
      .meta({ description: 'only these annotators (user ids, or job ids with annotator_by job)' }),
  })
  .refine((b) => (b.session_id === undefined) !== (b.frame_ids === undefined), {
    message: 'name exactly one of session_id or frame_ids',
    path: ['session_id'],
  })
  .meta({ description: 'the frames: exactly one of session_id or frame_ids' });

export const CalibrateFitIn = z
  .strictObject({
    gold_id: z.uuid().nullish(),
    session_id: z.uuid().nullish(),
    method: z
      .enum(['temperature', 'isotonic'])
      .nullish()
      .meta({ description: 'extension: the map to fit; null picks the lower cross-validated ECE' }),
    activate: z.boolean().default(false).meta({
      description: 'extension: make it the one active calibration (auto-accept routing, threshold fits)',
    }),
  })
  .refine((b) => (b.gold_id == null) !== (b.session_id == null), {
    message: 'name exactly one of gold_id or session_id',
    path: ['gold_id'],
  })
  .meta({ description: 'CalibrateFitIn: exactly one of gold_id or session_id' });

export const SheetQuery = z.strictObject({
  slice_id: z
    .uuid()
    .optional()
    .meta({ description: 'a curation slice: the sheet of its objects; omitted: the corpus' }),
});

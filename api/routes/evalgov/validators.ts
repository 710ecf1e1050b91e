import { z } from 'zod';
import { BOOTSTRAP_MAX_VALUES } from '../../../activities/evalgov/stats';
import { EVAL_MAX_SLICES } from '../../../activities/evalgov/evaluate';
import { SlicePredicate } from '../../../core/curation/slice';
import { AUDIT_VERDICTS, DEFAULT_SAFETY_FLOOR } from '../../../core/evalgov';
import { BOOTSTRAP_DEFAULTS, PERMUTATION_DEFAULT } from '../../../core/quality/stats';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Bodies and queries of the evaluation-governance routes (docs/quality-evalgov.md). */

const iouThr = z
  .number()
  .gt(0)
  .max(1)
  .default(0.5)
  .meta({ description: 'IoU a prediction needs to match gold' });
const confThr = z
  .number()
  .min(0)
  .max(1)
  .default(0.5)
  .meta({ description: 'the operating point: predictions with conf ≥ conf_thr count' });
const alpha = z.number().gt(0).lt(1).default(BOOTSTRAP_DEFAULTS.alpha);
const nBoot = z.int().min(100).max(20_000).default(BOOTSTRAP_DEFAULTS.nBoot);
const seed = z
  .int()
  .min(0)
  .max(2 ** 32 - 1)
  .default(BOOTSTRAP_DEFAULTS.seed);
const modelVersion = z.string().trim().min(1).max(200);
const className = z.string().trim().min(1).max(100);
const floor = z.number().min(0).max(1);

/** Spec BootstrapIn: values* array<number>; alpha (0.05); n_boot (2000); seed (12345). */
export const BootstrapIn = z.strictObject({
  values: z
    .array(z.number())
    .min(1)
    .max(BOOTSTRAP_MAX_VALUES)
    .meta({ description: `the sample whose mean is bootstrapped (at most ${BOOTSTRAP_MAX_VALUES})` }),
  alpha,
  n_boot: nBoot,
  seed,
});

export const EvaluateIn = z.strictObject({
  run_id: z.uuid().meta({ description: 'the inference run evaluated' }),
  gold_id: z.uuid().meta({ description: 'the sealed gold set it is evaluated against' }),
  slice_ids: z
    .array(z.uuid())
    .min(1)
    .max(EVAL_MAX_SLICES)
    .optional()
    .meta({ description: 'curation slices evaluated besides the whole gold set, one operation each' }),
  iou_thr: iouThr.meta({
    description: 'IoU of the per-class counts, precision and recall (COCO AP uses .50:.95)',
  }),
});

export const SignificanceIn = z.strictObject({
  run_a: z.uuid(),
  run_b: z.uuid(),
  gold_id: z.uuid(),
  slice_id: z.uuid().optional().meta({ description: 'compare on one slice of the gold set' }),
  iou_thr: iouThr,
  conf_thr: confThr,
  alpha,
  n_boot: nBoot,
  seed,
  n_perm: z.int().min(1).max(100_000).default(PERMUTATION_DEFAULT),
});

const modelList = z
  .string()
  .max(4000)
  .transform((v, ctx) => {
    const list = [...new Set(v.split(',').map((s) => s.trim()))].filter(Boolean);
    if (!list.length || list.length > 100 || list.some((s) => s.length > 200)) {
      ctx.addIssue({ code: 'custom', message: '1 to 100 comma-separated model versions' });
      return z.NEVER;
    }
    return list;
  });

export const MatrixQuery = z.strictObject({
  gold_id: z.uuid().optional().meta({ description: 'only evaluations against this gold set' }),
  model_versions: modelList.optional().meta({ description: 'comma-separated model versions (rows)' }),
});

export const HierarchicalQuery = z
  .strictObject({
    operation_id: z.uuid().optional().meta({ description: 'an evalgov_evaluate operation' }),
    model_version: modelVersion.optional().meta({ description: 'its latest evaluation' }),
    gold_id: z.uuid().optional().meta({ description: 'with model_version: on this gold set' }),
    slice_id: z
      .uuid()
      .optional()
      .meta({ description: 'with model_version: of this slice (default: the whole gold set)' }),
  })
  .refine((q) => (q.operation_id === undefined) !== (q.model_version === undefined), {
    message: 'name exactly one of operation_id or model_version',
  });

export const SafetyRecallIn = z.strictObject({
  run_id: z.uuid(),
  gold_id: z.uuid(),
  slice_id: z.uuid().optional(),
  iou_thr: iouThr,
  conf_thr: confThr,
  alpha: alpha.meta({ description: 'of the Wilson interval beside each recall' }),
  floors: z
    .strictObject({
      default: floor.optional().meta({ description: `every safety class (default ${DEFAULT_SAFETY_FLOOR})` }),
      by_l1: z
        .strictObject({ vru: floor.optional(), animal: floor.optional(), two_wheeler: floor.optional() })
        .optional(),
      by_class: z
        .record(className, floor)
        .refine((r) => Object.keys(r).length <= 200, 'at most 200 classes')
        .optional()
        .meta({ description: 'by class name; must be safety classes' }),
    })
    .optional()
    .meta({ description: 'recall floors: by class, else by l1, else default' }),
});

export const ShadowTriageIn = z.strictObject({
  champion_run_id: z.uuid().meta({ description: 'the production run' }),
  challenger_run_id: z.uuid().meta({ description: 'the shadow run' }),
  frame_ids: z
    .array(z.uuid())
    .min(1)
    .max(20_000)
    .optional()
    .meta({ description: 'the frames compared (default: every frame either run predicted on)' }),
  iou_thr: iouThr,
  conf_thr: confThr.meta({ description: 'a box is confident from this conf' }),
  limit: z.int().min(1).max(500).default(50).meta({ description: 'frames returned, most disagreeing first' }),
  per_frame: z.int().min(1).max(200).default(20).meta({ description: 'disagreements listed per frame' }),
});

export const PairsQuery = z.strictObject({
  gold_id: z.uuid().optional(),
  slice_id: z
    .union([z.literal('all'), z.uuid()])
    .optional()
    .meta({ description: '`all`: the whole gold set; a slice id; omitted: every scope' }),
  model_version: modelVersion.optional().meta({ description: 'pairs that include this model' }),
  limit: limitParam(100, 500),
  offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
});

export const ModelEvalsQuery = z.strictObject({
  gold_id: z.uuid().optional(),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

export const ModelParams = z.object({ model_version: modelVersion });

export const BlindAuditSeedIn = z.strictObject({
  name: z.string().trim().min(1).max(200),
  seed: seed.meta({ description: 'the same seed over the same objects draws the same sample' }),
  per_class: z.int().min(1).max(500).default(25).meta({ description: 'objects drawn per class' }),
  classes: z.array(className).min(1).max(200).optional().meta({ description: 'only these classes' }),
  slice_id: z.uuid().optional().meta({ description: "draw from a curation slice's objects" }),
  predicate: SlicePredicate.optional().meta({
    description: 'draw from the objects of this predicate (states default to accepted and auto_accept)',
  }),
});

export const BlindAuditsQuery = z.strictObject({
  status: z.enum(['open', 'scored']).optional(),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

export const BlindAuditQuery = z.strictObject({
  reveal: booleanParam
    .default(false)
    .meta({ description: "admins only: show each item's hidden source and confidence" }),
});

export const MarkLabeledIn = z.strictObject({
  verdicts: z
    .array(z.strictObject({ object_id: z.uuid(), verdict: z.enum(AUDIT_VERDICTS) }))
    .min(1)
    .max(1000),
  overwrite: z.boolean().default(false).meta({ description: 'replace verdicts already given (else 409)' }),
});

export const ScoreIn = z.strictObject({
  alpha,
  partial: z.boolean().default(false).meta({ description: 'score although items remain unlabelled' }),
});

export const EstimateQuery = z.strictObject({
  alpha: z.coerce.number().gt(0).lt(1).default(BOOTSTRAP_DEFAULTS.alpha),
});

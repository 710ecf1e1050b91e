import { z } from 'zod';
import {
  BULK_MAX_CANDIDATES,
  CANDIDATE_STATES,
  DEFAULT_API_OPTIONS,
  VERDICTS,
} from '../../../activities/errordetect';
import { RUN_MAX_FRAMES } from '../../../activities/quality/inference-runs';
import { ERROR_KINDS } from '../../../core/errordetect';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Bodies and queries of the errordetect routes (docs/quality-errordetect.md). */

const D = DEFAULT_API_OPTIONS;
const share = (description: string, fallback: number) =>
  z.number().min(0).max(1).default(fallback).meta({ description });

/** The detector's options (core/errordetect DEFAULT_ERROR_DETECTION_OPTIONS, in snake_case). */
export const DetectorOptionsIn = z
  .strictObject({
    match_iou: z
      .number()
      .gt(0)
      .max(1)
      .default(D.match_iou)
      .meta({ description: 'least IoU at which a label and a prediction are paired (class-agnostic)' }),
    duplicate_iou: share(
      'least IoU between two labels of one class to call them duplicates',
      D.duplicate_iou,
    ),
    missing_min_conf: share(
      'least confidence of a prediction proposed as a missing label',
      D.missing_min_conf,
    ),
    missing_max_iou: share(
      'a missing label overlaps every label below this IoU (at most match_iou)',
      D.missing_max_iou,
    ),
    bad_box_min_conf: share('least confidence of the prediction a bad box is moved to', D.bad_box_min_conf),
    bad_box_max_iou: share(
      'a paired label of the prediction’s class under this IoU is misaligned (above match_iou)',
      D.bad_box_max_iou,
    ),
    min_class_support: z.int().min(1).max(1_000_000).default(D.min_class_support).meta({
      description: 'paired labels of a class needed before its confident-learning threshold counts',
    }),
  })
  .superRefine((o, ctx) => {
    if (o.missing_max_iou > o.match_iou)
      ctx.addIssue({ code: 'custom', path: ['missing_max_iou'], message: 'must not exceed match_iou' });
    if (!(o.bad_box_max_iou > o.match_iou))
      ctx.addIssue({ code: 'custom', path: ['bad_box_max_iou'], message: 'must exceed match_iou' });
  });

export const ErrorDetectRunIn = z
  .strictObject({
    session_id: z.uuid().optional(),
    frame_ids: z.array(z.uuid()).min(1).max(RUN_MAX_FRAMES).optional(),
    gold_id: z.uuid().optional(),
    limit: z.int().min(1).max(RUN_MAX_FRAMES).optional(),
    run_id: z.uuid().optional().meta({
      description:
        'a completed, non-reconstructed inference run whose predictions to use; without it the closed-set detector runs over the scope on the GPU slot first',
    }),
    options: DetectorOptionsIn.prefault({}),
  })
  .meta({
    description:
      'the frames (session_id, frame_ids and gold_id narrow each other; at least one; limit takes the first frames), an optional inference run, the detector options',
  });

const reviewer = z.string().trim().min(1).max(128).default('error-detect');
const userId = z
  .uuid()
  .nullable()
  .default(null)
  .meta({ description: 'the user credited with the verdict (an existing user id); null credits the caller' });

export const ConfirmIn = z.strictObject({
  apply_proposed: z.boolean().default(true).meta({
    description: 'apply the proposed fix (relabel, move, delete, create) through the annotation store',
  }),
  reviewer,
  user_id: userId,
});

export const DismissIn = z.strictObject({
  note: z.string().max(4000).nullable().default(null),
  reviewer,
  user_id: userId,
});

export const BulkVerdictIn = z.strictObject({
  candidate_ids: z.array(z.uuid()).min(1).max(BULK_MAX_CANDIDATES),
  verdict: z.enum(VERDICTS),
  apply_proposed: z.boolean().default(true),
  note: z.string().max(4000).nullable().default(null),
  reviewer,
});

export const CandidatesQuery = z.strictObject({
  error_run_id: z.uuid().optional(),
  kind: z.enum(ERROR_KINDS).optional(),
  state: z.enum(CANDIDATE_STATES).optional(),
  frame_id: z.uuid().optional(),
  min_score: z.coerce.number().min(0).max(1).optional(),
  limit: limitParam(50, 500),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

const runsParam = limitParam(20, 200).meta({ description: 'how many error runs to list, newest first' });

export const PrecisionQuery = z.strictObject({
  error_run_id: z.uuid().optional(),
  by_run: booleanParam.default(false).meta({ description: 'also report each error run, newest first' }),
  runs: runsParam,
});

export const SummaryQuery = z.strictObject({
  error_run_id: z.uuid().optional(),
  runs: runsParam,
});

import { z } from 'zod';
import { TRACKS_PER_REQUEST } from '../../../activities/quality/track-quality';
import { DEFAULT_MAX_GAP } from '../../../core/tracking/gaps';
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

/** Which tracks a quality-along-tracks request covers (docs/quality.md "Quality along tracks"). */
const trackScopeFields = {
  session_id: z.uuid().optional().meta({ description: "the session's tracks" }),
  track_ids: z
    .array(z.uuid())
    .min(1)
    .max(TRACKS_PER_REQUEST)
    .optional()
    .meta({ description: 'these tracks (within session_id when both are given)' }),
};
const needsScope = (v: { session_id?: string | undefined; track_ids?: string[] | undefined }) =>
  v.session_id !== undefined || v.track_ids !== undefined;
const scopeMessage = { message: 'name session_id or track_ids', path: ['session_id'] };
const maxGap = z.coerce
  .number()
  .int()
  .min(1)
  .max(300)
  .default(DEFAULT_MAX_GAP)
  .meta({ description: 'longest gap filled, in missing frames; longer ones are listed, not filled' });
/** Track ids a plan's query may list: few enough that even a value several times too long (as the fuzz run sends) stays under the server's 16 KB header limit and gets a 422, not a 431. */
const QUERY_TRACK_IDS = 50;
/** GET …/plan: track_ids as a comma-separated list (a longer scope: name the session). */
const trackIdsQuery = z
  .string()
  .max(QUERY_TRACK_IDS * 37 - 1)
  .transform((v) => v.split(',').filter(Boolean))
  .pipe(z.array(z.uuid()).min(1).max(QUERY_TRACK_IDS))
  .optional()
  .meta({ description: `comma-separated track ids, at most ${QUERY_TRACK_IDS}` });

export const TrackGapFillIn = z
  .strictObject({ ...trackScopeFields, max_gap: maxGap })
  .refine(needsScope, scopeMessage);
export const TrackGapFillQuery = z
  .strictObject({ session_id: trackScopeFields.session_id, track_ids: trackIdsQuery, max_gap: maxGap })
  .refine(needsScope, scopeMessage);
export const TrackRelabelBackfillIn = z
  .strictObject({
    ...trackScopeFields,
    reviewer: z
      .string()
      .min(1)
      .max(128)
      .default('anon')
      .meta({ description: 'the name the reviews and batches carry' }),
  })
  .refine(needsScope, scopeMessage);
export const TrackRelabelBackfillQuery = z
  .strictObject({ session_id: trackScopeFields.session_id, track_ids: trackIdsQuery })
  .refine(needsScope, scopeMessage);

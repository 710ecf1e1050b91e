import { z } from 'zod';
import { TrainingStartIn } from '../training/validators';
import { commitIdSchema } from '../../../activities/datasets/read';
import { DEFAULT_WEIGHTS, SCORE_PARTS } from '../../../core/activelearn/score';
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_NAMES } from '../../../core/curation/embedding';
import { limitParam } from '../../http/session-reads';

/**
 * Bodies and queries of the activelearn group. The spec names the routes but no model; the names and
 * fields are the project's (docs/activelearn.md).
 */

/** Frames one batch may pick: a day's work for a small review team, and what one request can score in about a second. */
export const SELECT_MAX_BUDGET = 500;
export const SELECT_DEFAULT_BUDGET = 50;
/** Frame ids one score request may name: they travel in the query string, well inside Node's 16 KiB header limit. */
export const SCORE_MAX_FRAME_IDS = 200;

const weight = z.number().min(0).max(1);

/** All three parts, each in [0, 1], at least one above 0; scaled to sum to 1 when used. */
const Weights = z
  .strictObject({ uncertainty: weight, rarity: weight, diversity: weight })
  .refine((w) => SCORE_PARTS.some((p) => w[p] > 0), 'at least one weight must be above 0');

const threshold = z.number().min(0).max(1).nullable().default(null).meta({
  description:
    'the confidence the uncertainty margin is measured from; null: the deployment auto-accept threshold (APP_AUTOLABEL__AUTO_ACCEPT_CONF)',
});

const model = z
  .enum(EMBEDDING_MODEL_NAMES)
  .default(DEFAULT_EMBEDDING_MODEL)
  .meta({ description: 'the per-frame embedding diversity is measured on (docs/curation.md)' });

export const ActiveLearnSelectIn = z.strictObject({
  budget: z
    .int()
    .min(1)
    .max(SELECT_MAX_BUDGET)
    .default(SELECT_DEFAULT_BUDGET)
    .meta({ description: 'frames to pick (fewer when fewer candidates are left)' }),
  session_ids: z
    .array(z.uuid())
    .min(1)
    .max(1000)
    .optional()
    .meta({ description: 'only frames of these sessions (each must exist); omitted: the whole corpus' }),
  classes: z.array(z.string().min(1).max(64)).min(1).max(200).optional().meta({
    description:
      'only machine-made objects of these ontology classes or their descendants count (each must exist); omitted: every class',
  }),
  weights: Weights.default({ ...DEFAULT_WEIGHTS }).meta({
    description: `uncertainty, rarity and diversity, each in [0, 1], scaled to sum to 1; default ${JSON.stringify(DEFAULT_WEIGHTS)}`,
  }),
  threshold,
  model,
  route_to_review: z.boolean().default(false).meta({
    description:
      "move the picked frames' auto-accepted machine objects to review, so they enter the review queue",
  }),
});

const frameIds = z
  .string()
  .transform((s) => s.split(',').map((id) => id.trim().toLowerCase()))
  .pipe(z.array(z.uuid()).min(1).max(SCORE_MAX_FRAME_IDS))
  .meta({ description: `comma-separated frame ids, at most ${SCORE_MAX_FRAME_IDS}` });

const weightsParam = z
  .string()
  .regex(/^[0-9.]+,[0-9.]+,[0-9.]+$/, 'three comma-separated numbers: uncertainty,rarity,diversity')
  .transform((s) => {
    const [uncertainty, rarity, diversity] = s.split(',').map(Number) as [number, number, number];
    return { uncertainty, rarity, diversity };
  })
  .pipe(Weights)
  .optional()
  .meta({ description: 'uncertainty,rarity,diversity (e.g. 0.5,0.3,0.2); omitted: the defaults' });

export const ActiveLearnScoreQuery = z
  .strictObject({
    frame_ids: frameIds.optional(),
    session_id: z.uuid().optional().meta({ description: "score this session's candidate frames" }),
    weights: weightsParam,
    threshold: z.coerce.number().min(0).max(1).optional().meta({
      description:
        'the confidence the uncertainty margin is measured from; omitted: the auto-accept threshold',
    }),
    model,
    limit: limitParam(100, 1000).meta({ description: 'scores answered, best first' }),
  })
  .superRefine((q, ctx) => {
    if ((q.frame_ids === undefined) === (q.session_id === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [q.frame_ids === undefined ? 'frame_ids' : 'session_id'],
        message: 'give exactly one of frame_ids and session_id',
      });
  })
  .meta({ oneOf: [{ required: ['frame_ids'] }, { required: ['session_id'] }] });

export const ActiveLearnBatchesQuery = z.strictObject({
  limit: limitParam(20, 100),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page' }),
});

/**
 * The training start's own body (TrainingStartIn) with the dataset commit optional: the loop trains
 * on the newest commit unless told which.
 */
export const ActiveLearnRetrainIn = TrainingStartIn.extend({
  dataset_commit_id: commitIdSchema.optional().meta({
    description:
      'the commit holding the newly labelled frames; omitted: the newest commit. It must hold at least one batch frame decided since the last retrain, exported after its review',
  }),
});

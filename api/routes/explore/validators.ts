import { z } from 'zod';
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_NAMES } from '../../../core/curation/embedding';
import { SlicePredicate } from '../../../core/curation/slice';
import {
  PROJECTION_MAX_FRAMES,
  PROJECTION_METHODS,
  PROJECTION_MIN_FRAMES,
  UMAP_DEFAULTS,
} from '../../../core/explore/projection';
import { MEASURE_DEFAULTS } from '../../../core/quality/gold-measure';
import { bootstrapOptions } from '../../http/bootstrap-options';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of the explore routes (the spec shows none; docs/quality-explore.md). */

const uuid = z.uuid().transform((id) => id.toLowerCase());

const pageQuery = (defaultLimit: number, max: number) =>
  z.strictObject({
    limit: limitParam(defaultLimit, max),
    cursor: z.string().max(512).optional().meta({ description: 'next_cursor of the previous page' }),
  });

export const ExploreEvalIn = z.strictObject({
  run_id: z
    .uuid()
    .meta({ description: 'the inference run evaluated (POST /api/inference-runs); it must be completed' }),
  gold_id: z.uuid().nullable().default(null).meta({
    description:
      "a sealed gold set as the reference; null: the accepted human objects of the run's human-verified frames",
  }),
  iou_thr: z.number().gt(0).max(1).default(MEASURE_DEFAULTS.iou_thr),
  min_conf: z
    .number()
    .min(0)
    .max(1)
    .default(0.25)
    .meta({ description: 'predictions under this confidence are left out of the matrix (not of AP)' }),
  ap: z.boolean().default(true).meta({
    description:
      'against a gold set, also AP per class with bootstrap intervals (refused for a reconstructed run: pass false for the matrix alone)',
  }),
  ...bootstrapOptions,
});

export const EvalsQuery = pageQuery(50, 200);

const classLabel = z
  .string()
  .min(1)
  .max(100)
  .optional()
  .meta({ description: 'a class name, an ontology class id, or `background` (-1); omitted: any' });

export const PatchesQuery = z.strictObject({
  true_class: classLabel,
  pred_class: classLabel,
  limit: limitParam(100, 1000),
  cursor: uuid.optional().meta({ description: 'next_cursor of the previous page (the last member id)' }),
});

const predicate = SlicePredicate.meta({
  description: 'a slice predicate (docs/curation.md); {} selects every object',
});

const sliceOrPredicate = {
  slice_id: z.uuid().optional().meta({ description: 'a saved slice; or give predicate' }),
  predicate: predicate.optional(),
};
const notBoth = <T extends { slice_id?: string | undefined; predicate?: unknown }>(
  body: T,
  ctx: z.RefinementCtx,
) => {
  if (body.slice_id !== undefined && body.predicate !== undefined)
    ctx.addIssue({ code: 'custom', path: ['predicate'], message: 'give slice_id or predicate, not both' });
};

export const FacetsIn = z
  .strictObject({
    ...sliceOrPredicate,
    top: z
      .int()
      .min(1)
      .max(1000)
      .default(50)
      .meta({ description: 'sessions listed in by_session, largest first' }),
  })
  .superRefine(notBoth)
  .meta({ description: 'a saved slice, an inline predicate, or neither (every object)' });

export const ProjectionIn = z.strictObject({
  method: z.enum(PROJECTION_METHODS).default('umap'),
  session_ids: z
    .array(z.uuid())
    .min(1)
    .max(1000)
    .optional()
    .meta({ description: 'only frames of these sessions (each must exist)' }),
  slice_id: z.uuid().optional().meta({ description: 'only frames holding an object of this slice' }),
  model: z.enum(EMBEDDING_MODEL_NAMES).default(DEFAULT_EMBEDDING_MODEL),
  max_frames: z
    .int()
    .min(PROJECTION_MIN_FRAMES)
    .max(PROJECTION_MAX_FRAMES)
    .default(PROJECTION_MAX_FRAMES)
    .meta({
      description: `more embedded frames in scope are sampled evenly down to this (at most ${PROJECTION_MAX_FRAMES})`,
    }),
  seed: z
    .int()
    .min(0)
    .max(2 ** 31 - 1)
    .default(12345)
    .meta({ description: 'UMAP: the same seed gives the same layout' }),
  n_neighbors: z.int().min(2).max(200).default(UMAP_DEFAULTS.n_neighbors),
  min_dist: z.number().min(0).max(1).default(UMAP_DEFAULTS.min_dist),
});

export const ProjectionsQuery = pageQuery(50, 200);

export const PointsQuery = z.strictObject({
  limit: limitParam(1000, PROJECTION_MAX_FRAMES),
  cursor: uuid.optional().meta({ description: 'next_cursor of the previous page (the last frame id)' }),
});

const coordinate = z.number().min(-1e12).max(1e12);

export const SelectIn = z
  .strictObject({
    projection_id: z.uuid(),
    rect: z
      .strictObject({ x_min: coordinate, y_min: coordinate, x_max: coordinate, y_max: coordinate })
      .optional()
      .meta({ description: 'an axis-aligned rectangle in projection coordinates, sides included' }),
    polygon: z
      .array(z.tuple([coordinate, coordinate]))
      .min(3)
      .max(1000)
      .optional()
      .meta({ description: 'vertices [[x, y], ...] in order (even-odd rule, edges included)' }),
    include_objects: z.boolean().default(false).meta({ description: "each frame's objects too" }),
    limit: z.int().min(1).max(PROJECTION_MAX_FRAMES).default(1000),
    cursor: uuid.optional().meta({ description: 'next_cursor of the previous page (the last frame id)' }),
  })
  .superRefine((body, ctx) => {
    if ((body.rect === undefined) === (body.polygon === undefined))
      ctx.addIssue({ code: 'custom', path: ['rect'], message: 'give exactly one of rect and polygon' });
  })
  .meta({ oneOf: [{ required: ['rect'] }, { required: ['polygon'] }] });

const tagName = z
  .string()
  .trim()
  .min(1)
  .max(64)
  // A refinement rather than a pattern: `\p{Cc}` is not a JSON-Schema pattern every client can use.
  .refine((t) => !/\p{Cc}/u.test(t), { message: 'no control characters' });

export const TagIn = z.strictObject({
  tag: tagName,
  target_kind: z.enum(['frame', 'object']),
  target_ids: z.array(z.uuid()).min(1).max(1000).meta({ description: 'frames or objects; each must exist' }),
});

export const TagsQuery = z.strictObject({
  target_kind: z.enum(['frame', 'object']).optional(),
  target_id: uuid.optional().meta({ description: 'the tags of one frame or object' }),
  prefix: z.string().min(1).max(64).optional(),
  limit: limitParam(100, 1000),
});

/** A view's state is the client's; it is kept as given, up to 64 KiB of JSON. */
const VIEW_STATE_MAX_BYTES = 65_536;

export const ViewIn = z.strictObject({
  name: z.string().trim().min(1).max(200),
  predicate,
  state: z
    .record(z.string().max(200), z.unknown())
    .default({})
    .refine((s) => Buffer.byteLength(JSON.stringify(s)) <= VIEW_STATE_MAX_BYTES, {
      message: `at most ${VIEW_STATE_MAX_BYTES} bytes of JSON`,
    })
    .meta({ description: 'the view as the client saved it (projection, colouring, selection…)' }),
});

export const ViewsQuery = pageQuery(50, 200);

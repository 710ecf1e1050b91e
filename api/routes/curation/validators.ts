import { z } from 'zod';
import { EXTRACT_DEFAULT_FRAMES, EXTRACT_MAX_FRAMES } from '../../../activities/curation/extract';
import { DEDUP_DEFAULT_THRESHOLD, DEDUP_MAX_THRESHOLD } from '../../../core/curation/dedup';
import { DEFAULT_EMBEDDING_MODEL, EMBEDDING_MODEL_NAMES } from '../../../core/curation/embedding';
import { DIVERSE_MAX_K } from '../../../core/curation/kcenter';
import { SlicePredicate } from '../../../core/curation/slice';
import { limitParam } from '../../http/session-reads';

/** Bodies and queries of the curation routes (the spec names SliceIn only; docs/curation.md). */

const sessionIds = z
  .array(z.uuid())
  .min(1)
  .max(1000)
  .meta({ description: 'only frames of these sessions (each must exist); omitted: the whole corpus' });

const embeddingModel = z
  .enum(EMBEDDING_MODEL_NAMES)
  .default(DEFAULT_EMBEDDING_MODEL)
  .meta({ description: 'the per-frame embedding (docs/curation.md)' });

const predicate = SlicePredicate.meta({
  description:
    'objects selected by state, class (with its descendants), l1, source, session, min_conf, frame context (incl. lighting), rarity band, region and track_event; region and track_event=true match nothing yet',
});

export const SliceIn = z.strictObject({
  name: z.string().trim().min(1).max(200),
  predicate,
});

export const SlicesQuery = z.strictObject({
  limit: limitParam(50, 200),
  cursor: z.string().max(512).optional().meta({ description: 'next_cursor of the previous page' }),
});

export const MaterializeQuery = z.strictObject({
  limit: limitParam(100, 1000),
  cursor: z.uuid().optional().meta({ description: 'next_cursor of the previous page (the last object id)' }),
});

export const SummaryQuery = z.strictObject({
  top: limitParam(20, 200).meta({ description: 'classes listed in objects.by_class, largest first' }),
});

export const DedupIn = z.strictObject({
  threshold: z.int().min(0).max(DEDUP_MAX_THRESHOLD).default(DEDUP_DEFAULT_THRESHOLD).meta({
    description: 'largest Hamming distance between the 64-bit pHashes of two near-duplicate frames',
  }),
  session_ids: sessionIds.optional(),
  limit_clusters: z.int().min(1).max(1000).default(100),
});

export const EmbedIn = z.strictObject({
  session_ids: sessionIds.optional(),
  model: embeddingModel,
});

const UUID = '[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}';

/** Ids in a query string stay well inside Node's 16 KiB header limit (beyond it: 431, not a 422). */
const MAX_QUERY_SESSIONS = 200;

export const DiverseQuery = z.strictObject({
  k: z.coerce.number().int().min(1).max(DIVERSE_MAX_K).default(50),
  slice_id: z.uuid().optional().meta({ description: 'only frames with an object of this slice' }),
  session_ids: z
    .string()
    .max(37 * MAX_QUERY_SESSIONS - 1)
    .regex(new RegExp(`^${UUID}(,${UUID})*$`), 'comma-separated UUIDs')
    .transform((s) => s.split(',').map((id) => id.toLowerCase()))
    .optional()
    .meta({ description: `comma-separated session ids (at most ${MAX_QUERY_SESSIONS}): only their frames` }),
  model: embeddingModel,
});

export const ExtractIn = z
  .strictObject({
    slice_id: z.uuid().optional().meta({ description: 'a saved slice; or give predicate' }),
    predicate: predicate.optional(),
    project_id: z.string().trim().min(1).max(200),
    limit: z
      .int()
      .min(1)
      .max(EXTRACT_MAX_FRAMES)
      .default(EXTRACT_DEFAULT_FRAMES)
      .meta({ description: 'frames (assets) at most, in session and index order' }),
  })
  .superRefine((body, ctx) => {
    if ((body.slice_id === undefined) === (body.predicate === undefined))
      ctx.addIssue({
        code: 'custom',
        path: [body.slice_id === undefined ? 'slice_id' : 'predicate'],
        message: 'give exactly one of slice_id and predicate',
      });
  })
  // The refinement above, said in the schema so that the OpenAPI document states it too.
  .meta({ oneOf: [{ required: ['slice_id'] }, { required: ['predicate'] }] });

import { findDuplicateFrames } from '../../../activities/curation/dedup';
import { diverseFrames } from '../../../activities/curation/diverse';
import { extractSlice, EXTRACT_MAX_FRAMES } from '../../../activities/curation/extract';
import { checkPredicate, checkSessions } from '../../../activities/curation/slice-query';
import {
  createSlice,
  findSlice,
  listSlices,
  materializeSlice,
  sliceOut,
  slicePredicate,
} from '../../../activities/curation/slices';
import { corpusSummary } from '../../../activities/curation/summary';
import { DEDUP_DEFAULT_THRESHOLD, DEDUP_MAX_FRAMES } from '../../../core/curation/dedup';
import { DIVERSE_MAX_FRAMES, DIVERSE_WORK_BUDGET } from '../../../core/curation/kcenter';
import { curationEmbedWorkflow } from '../../../workflows/curation-embed';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import {
  DedupIn,
  DiverseQuery,
  EmbedIn,
  ExtractIn,
  MaterializeQuery,
  SliceIn,
  SlicesQuery,
  SummaryQuery,
} from './validators';

/** The `curation` group: slices, the corpus summary, and the dedup, embed, diverse and extract helpers (docs/curation.md). */
export function createCurationRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('curation')
    .post(
      '/api/curation/slices',
      {
        summary:
          'Save a slice: a named predicate over objects; unknown class names, l1 values or lighting values are refused (422 naming them)',
        access: 'reviewer',
        body: { name: 'SliceIn', schema: SliceIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) => sliceOut(await createSlice(db, body, actorOf(principal, req))),
    )
    .get(
      '/api/curation/slices',
      {
        summary: 'Saved slices, newest first, by keyset pagination: pass next_cursor back as cursor',
        access: 'annotator',
        query: SlicesQuery,
      },
      async ({ query }) => listSlices(db, query),
    )
    .get(
      '/api/curation/slices/{slice_id}/materialize',
      {
        summary:
          "What a slice selects now: objects, frames and sessions, objects per class and per state, one page of objects in id order (cursor: next_cursor), and the predicate's parts that cannot match yet",
        access: 'annotator',
        params: uuidParams('slice_id'),
        query: MaterializeQuery,
        statuses: { 404: 'no such slice' },
      },
      async ({ params, query }) => {
        const slice = await findSlice(db, params.slice_id);
        return {
          slice: sliceOut(slice),
          ...(await materializeSlice(db, slicePredicate(slice), { limit: query.limit, after: query.cursor })),
        };
      },
    )
    .get(
      '/api/curation/summary',
      {
        summary:
          'The corpus at a glance: sessions, frames, objects; objects per state, l1, class, rarity band, lighting and source; frames audited, redacted, hashed and embedded; saved slices',
        access: 'annotator',
        query: SummaryQuery,
      },
      async ({ query }) => corpusSummary(db, query.top),
    )
    .post(
      '/api/curation/dedup',
      {
        summary: `Near-duplicate frames across sessions from their stored 64-bit pHashes (multi-index hashing; threshold ${DEDUP_DEFAULT_THRESHOLD} bits by default): clusters spanning at least two sessions, largest first. At most ${DEDUP_MAX_FRAMES} frames per request, fewer at high thresholds (422 names the cap; docs/curation.md)`,
        access: 'reviewer',
        body: { name: 'DedupIn', schema: DedupIn },
        statuses: { 404: 'a session of session_ids does not exist' },
      },
      async ({ body }) =>
        findDuplicateFrames(db, {
          threshold: body.threshold,
          sessionIds: body.session_ids,
          limitClusters: body.limit_clusters,
        }),
    )
    .post(
      '/api/curation/embed',
      {
        summary:
          'Embed every frame lacking an embedding of the model from its redacted copy (Temporal workflow curationEmbedWorkflow, id curation-embed-<model>); 202 with a Location whose summary counts embedded frames, progress and outcome on /api/events/jobs',
        access: 'reviewer',
        body: { name: 'EmbedIn', schema: EmbedIn },
        successStatus: 202,
        statuses: {
          404: 'a session of session_ids does not exist',
          409: 'an embedding run of this model is already running',
        },
      },
      async ({ body, principal, req, res }) => {
        await checkSessions(db, body.session_ids, 'body.session_ids');
        const started = await startWorkflow(deps, res, {
          workflow: curationEmbedWorkflow,
          workflowId: `curation-embed-${body.model}`,
          args: [
            {
              model: body.model,
              sessionIds: body.session_ids ?? null,
              actorId: principal.userId,
              requestId: String(req.id),
            },
          ],
          location: '/api/curation/summary',
          what: `an embedding run of ${body.model}`,
        });
        return {
          ...started,
          model: body.model,
          session_ids: body.session_ids ?? null,
          events_url: '/api/events/jobs',
        };
      },
    )
    .get(
      '/api/curation/diverse',
      {
        summary: `A diverse subset of k frames by k-center greedy on their stored embeddings, deterministic (first pick farthest from the mean, ties by frame id), in pick order with each pick's distance and covering radius; at most ${DIVERSE_MAX_FRAMES} candidate frames and k × candidates ≤ ${DIVERSE_WORK_BUDGET} (422 otherwise)`,
        access: 'annotator',
        query: DiverseQuery,
        statuses: { 404: 'no such slice, or a session of session_ids does not exist' },
      },
      async ({ query }) => {
        const predicate = query.slice_id ? slicePredicate(await findSlice(db, query.slice_id)) : null;
        await checkSessions(db, query.session_ids, 'query.session_ids');
        return diverseFrames(db, {
          k: query.k,
          model: query.model,
          predicate,
          sessionIds: query.session_ids ?? null,
        });
      },
    )
    .post(
      '/api/curation/extract',
      {
        summary: `Extract a slice's frames and objects as a new asset set in one transaction: an image asset per frame (its redacted copy) and an accepted bbox annotation per selected object; at most ${EXTRACT_MAX_FRAMES} frames`,
        access: 'reviewer',
        body: { name: 'ExtractIn', schema: ExtractIn },
        successStatus: 201,
        statuses: { 404: 'no such slice' },
      },
      async ({ body, principal, req }) => {
        const slice = body.slice_id ? await findSlice(db, body.slice_id) : null;
        const predicate = slice ? slicePredicate(slice) : body.predicate!;
        if (!slice) await checkPredicate(db, predicate, 'body.predicate');
        return extractSlice(
          db,
          { projectId: body.project_id, predicate, sliceId: slice?.id ?? null, limit: body.limit },
          actorOf(principal, req),
        );
      },
    );
}

import { checkPredicate, checkSessions } from '../../../activities/curation/slice-query';
import { findSlice, slicePredicate } from '../../../activities/curation/slices';
import {
  deleteExploreEval,
  EXPLORE_EVAL_MAX_BOXES,
  EXPLORE_EVAL_MAX_FRAMES,
  exploreEvalCells,
  exploreEvalPatches,
  listExploreEvals,
  runExploreEval,
} from '../../../activities/explore/evals';
import { exploreFacets } from '../../../activities/explore/facets';
import {
  createProjection,
  deleteProjection,
  exploreProjectionWorkflowId,
  listProjections,
  projectionOut,
  projectionPoints,
  selectProjectionPoints,
} from '../../../activities/explore/projections';
import { listTags, tagTargets } from '../../../activities/explore/tags';
import { exportNameOf, findView, listViews, saveView } from '../../../activities/explore/views';
import { goldProvenance } from '../../../activities/quality/gold';
import { PROJECTION_MAX_FRAMES } from '../../../core/explore/projection';
import { exploreProjectionWorkflow } from '../../../workflows/explore-projection';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { ExportIn } from '../../http/exports';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';
import {
  EvalsQuery,
  ExploreEvalIn,
  FacetsIn,
  PatchesQuery,
  PointsQuery,
  ProjectionIn,
  ProjectionsQuery,
  SelectIn,
  TagIn,
  TagsQuery,
  ViewIn,
  ViewsQuery,
} from './validators';

/** The `explore` group: evaluations with confusion cells and patches, facets, projections, tags, views (docs/quality-explore.md). */
export function createExploreRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('explore')
    .get(
      '/api/explore/gold/{gold_id}/provenance',
      {
        summary:
          'A gold set split into human-confirmed detections (the machine proposed them) and boxes drawn from scratch, per class, with how much the confirmations changed',
        access: 'annotator',
        params: uuidParams('gold_id'),
        statuses: { 404: 'no such gold set', 409: 'not sealed' },
      },
      async ({ params }) => goldProvenance(db, params.gold_id),
    )
    .post(
      '/api/explore/eval',
      {
        summary: `An inference run against a gold set (gold_id) or the accepted human objects of its human-verified frames, as a confusion matrix (class-agnostic optimal matching at iou_thr; background -1 = missed / false detection) with per-class precision and recall, and AP with bootstrap intervals against gold; every cell member is stored for its patches, recorded as eval operation explore_eval. At most ${EXPLORE_EVAL_MAX_FRAMES} frames and ${EXPLORE_EVAL_MAX_BOXES} boxes; a reconstructed run is refused AP`,
        access: 'annotator',
        body: { name: 'ExploreEvalIn', schema: ExploreEvalIn },
        successStatus: 201,
        statuses: {
          404: 'no such run or gold set',
          409: 'the run is not completed, or the gold set is not sealed',
          422: 'reconstructed run (AP), no human-verified frame, or too large',
        },
      },
      async ({ body, principal, req }) => runExploreEval(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/explore/evals',
      {
        summary:
          'Explore evaluations, newest first, with their totals (keyset pages: pass next_cursor back as cursor)',
        access: 'annotator',
        query: EvalsQuery,
      },
      async ({ query }) => listExploreEvals(db, query),
    )
    .delete(
      '/api/explore/eval/{eval_id}',
      {
        summary: 'Delete an explore evaluation: its cell members and its eval operation',
        access: 'reviewer',
        params: uuidParams('eval_id'),
        statuses: { 404: 'no such explore evaluation' },
      },
      async ({ params, principal, req }) => deleteExploreEval(db, params.eval_id, actorOf(principal, req)),
    )
    .get(
      '/api/explore/eval/{eval_id}/cells',
      {
        summary:
          'The confusion cells of an evaluation: member counts per (true class, predicted class), background -1, with class names and per-class precision and recall',
        access: 'annotator',
        params: uuidParams('eval_id'),
        statuses: { 404: 'no such explore evaluation' },
      },
      async ({ params }) => exploreEvalCells(db, params.eval_id),
    )
    .get(
      '/api/explore/eval/{eval_id}/patches',
      {
        summary:
          "The members of one confusion cell (true_class, pred_class: a class name, id or background; one left out: its whole row or column), in id order, each with its crop URL (the prediction's, or the missed object's)",
        access: 'annotator',
        params: uuidParams('eval_id'),
        query: PatchesQuery,
        statuses: { 404: 'no such explore evaluation' },
      },
      async ({ params, query }) => exploreEvalPatches(db, params.eval_id, query),
    )
    .post(
      '/api/explore/facets',
      {
        summary:
          'Facet counts of the objects a slice (slice_id) or predicate selects: by class, state, source, l1, lighting, session and tag, with the objects, frames and sessions in it',
        access: 'annotator',
        body: { name: 'FacetsIn', schema: FacetsIn },
        statuses: { 404: 'no such slice' },
      },
      async ({ body }) => {
        const predicate = body.slice_id
          ? slicePredicate(await findSlice(db, body.slice_id))
          : (body.predicate ?? {});
        if (!body.slice_id) await checkPredicate(db, predicate, 'body.predicate');
        return {
          slice_id: body.slice_id ?? null,
          ...(await exploreFacets(db, predicate, { top: body.top })),
        };
      },
    )
    .post(
      '/api/explore/projection',
      {
        summary: `A 2-D projection (umap, seeded; or pca) of the stored frame embeddings of sessions, a slice's frames, or the corpus, as workflow explore-projection-<id> (202, Location: its points); at most ${PROJECTION_MAX_FRAMES} frames (more are sampled evenly); refused (422) while the frames have no embeddings`,
        access: 'reviewer',
        body: { name: 'ProjectionIn', schema: ProjectionIn },
        successStatus: 202,
        statuses: {
          404: 'no such slice or session',
          409: 'already running',
          422: 'no frames, no embeddings yet, or too few',
        },
      },
      async ({ body, principal, req, res }) => {
        const slice = body.slice_id ? await findSlice(db, body.slice_id) : null;
        await checkSessions(db, body.session_ids, 'body.session_ids');
        const { projection, counts } = await createProjection(
          db,
          {
            method: body.method,
            model: body.model,
            session_ids: body.session_ids ?? null,
            slice_id: slice?.id ?? null,
            predicate: slice ? slicePredicate(slice) : null,
            max_frames: body.max_frames,
            seed: body.seed,
            n_neighbors: body.n_neighbors,
            min_dist: body.min_dist,
          },
          actorOf(principal, req),
        );
        const workflowId = exploreProjectionWorkflowId(projection.id);
        try {
          const started = await startWorkflow(deps, res, {
            workflow: exploreProjectionWorkflow,
            workflowId,
            args: [{ projectionId: projection.id }],
            location: `/api/explore/projection/${projection.id}/points`,
            what: `projection ${projection.id}`,
          });
          return {
            ...projectionOut(projection),
            frames_in_scope: counts.frames,
            frames_embedded: counts.embedded,
            ...started,
          };
        } catch (err) {
          await db.exploreProjection.delete({ where: { id: projection.id } });
          throw err;
        }
      },
    )
    .get(
      '/api/explore/projections',
      {
        summary: 'Projections, newest first, with their status and outcome (keyset pages)',
        access: 'annotator',
        query: ProjectionsQuery,
      },
      async ({ query }) => listProjections(db, query),
    )
    .delete(
      '/api/explore/projection/{projection_id}',
      {
        summary: 'Delete a projection and its points (a running one: 409)',
        access: 'reviewer',
        params: uuidParams('projection_id'),
        statuses: { 404: 'no such projection', 409: 'still running' },
      },
      async ({ params, principal, req }) =>
        deleteProjection(db, params.projection_id, actorOf(principal, req)),
    )
    .get(
      '/api/explore/projection/{projection_id}/points',
      {
        summary: "A projection's points (frame, x, y, session, index) in frame-id order, one page at a time",
        access: 'annotator',
        params: uuidParams('projection_id'),
        query: PointsQuery,
        statuses: { 404: 'no such projection' },
      },
      async ({ params, query }) => projectionPoints(db, params.projection_id, query),
    )
    .post(
      '/api/explore/select',
      {
        summary:
          "The frames whose points of a completed projection lie inside a rectangle or polygon (edges included), in frame-id order and paged, optionally with each frame's objects",
        access: 'annotator',
        body: { name: 'SelectIn', schema: SelectIn },
        statuses: { 404: 'no such projection', 409: 'the projection is not completed' },
      },
      async ({ body }) =>
        selectProjectionPoints(db, {
          projection_id: body.projection_id,
          shape: body.rect ? { rect: body.rect } : { polygon: body.polygon! },
          include_objects: body.include_objects,
          limit: body.limit,
          cursor: body.cursor,
        }),
    )
    .post(
      '/api/explore/tag',
      {
        summary:
          'Tag frames or objects (idempotent: a target already carrying the tag is left as it is); every target must exist',
        access: 'annotator',
        body: { name: 'TagIn', schema: TagIn },
        statuses: { 404: 'a frame or object does not exist' },
      },
      async ({ body, principal, req }) => tagTargets(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/explore/tags',
      {
        summary:
          'Tags with how many frames and objects carry each, most used first; filter by target_kind, target_id or prefix',
        access: 'annotator',
        query: TagsQuery,
      },
      async ({ query }) => listTags(db, query),
    )
    .post(
      '/api/explore/views',
      {
        summary:
          "Save an explore view: a curation slice (the view's predicate: what it shows and exports) and the view's state, in one transaction",
        access: 'reviewer',
        body: { name: 'ViewIn', schema: ViewIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) => saveView(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/explore/views',
      {
        summary: 'Saved explore views, newest first, with their slices and state (keyset pages)',
        access: 'annotator',
        query: ViewsQuery,
      },
      async ({ query }) => listViews(db, query),
    )
    .get(
      '/api/explore/views/{slice_id}/export-spec',
      {
        summary:
          "The body POST /api/export accepts to export exactly this view's slice (ExportIn with its defaults)",
        access: 'annotator',
        params: uuidParams('slice_id'),
        statuses: { 404: 'no such view, or its slice is gone' },
      },
      async ({ params }) => {
        const { slice } = await findView(db, params.slice_id);
        return ExportIn.parse({ name: exportNameOf(slice.name, slice.id), slice_id: slice.id });
      },
    );
}

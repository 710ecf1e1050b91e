import { z } from 'zod';
import { commitLineage, modelLineage, sessionLineage } from '../../../activities/datasets/lineage';
import { commitIdSchema, findCommit } from '../../../activities/datasets/read';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/**
 * The lineage routes routes.tsv files under `campaigns` (docs/datasets-read.md). A dataset's
 * lineage is the same answer as `GET /api/datasets/{commit_id}/lineage`.
 */
export function createLineageRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('campaigns')
    .get(
      '/api/lineage/dataset/{commit_id}',
      {
        summary:
          'Where a dataset commit came from: sessions with frame counts, review activity on its objects, model versions, the export job and who ran it, parent and children',
        access: 'annotator',
        params: z.object({ commit_id: commitIdSchema }),
        statuses: { 404: 'no such commit' },
      },
      async ({ params }) => commitLineage(deps, await findCommit(db, params.commit_id)),
    )
    .get(
      '/api/lineage/session/{session_id}',
      {
        summary:
          'The dataset commits that hold a session (newest first) and the auto-label jobs that labelled it',
        access: 'annotator',
        params: uuidParams('session_id'),
        statuses: { 404: 'no such session, and no commit holds it' },
      },
      async ({ params }) => sessionLineage(db, params.session_id),
    )
    .get(
      '/api/lineage/model/{model_version}',
      {
        summary:
          'What a model version touched: the commits that record it and the sessions it auto-labelled; trained_on is null until training runs are recorded',
        access: 'annotator',
        params: z.object({ model_version: z.string().min(1).max(300) }),
      },
      async ({ params }) => modelLineage(db, params.model_version),
    );
}

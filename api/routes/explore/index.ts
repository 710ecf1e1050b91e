import { goldProvenance } from '../../../activities/quality/gold';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** The `explore` group: evaluations with confusion cells and patches, facets, projections, views (docs/quality.md). */
export function createExploreRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('explore').get(
    '/api/explore/gold/{gold_id}/provenance',
    {
      summary:
        'A gold set split into human-confirmed detections (the machine proposed them) and boxes drawn from scratch, per class, with how much the confirmations changed',
      access: 'annotator',
      params: uuidParams('gold_id'),
      statuses: { 404: 'no such gold set', 409: 'not sealed' },
    },
    async ({ params }) => goldProvenance(db, params.gold_id),
  );
}

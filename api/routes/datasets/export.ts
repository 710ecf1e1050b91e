import type { AppDeps } from '../../deps';
import { exportStartRoute } from '../../http/exports';
import { RouteGroup } from '../../http/route-group';

/** `POST /api/datasets/export`: the same export as `POST /api/export`, filed under `datasets`. */
export function createDatasetExportRoutes(deps: AppDeps): RouteGroup {
  return exportStartRoute(
    deps,
    new RouteGroup('datasets'),
    '/api/datasets/export',
    'Export a slice into a new dataset commit (the same as POST /api/export)',
  );
}

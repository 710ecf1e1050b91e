import type { AppDeps } from '../../deps';
import { EXPORT_START_STATUSES, ExportIn, startExport } from '../../http/exports';
import { RouteGroup } from '../../http/route-group';

/** `POST /api/datasets/export`: the same export as `POST /api/export`, filed under `datasets`. */
export function createDatasetExportRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('datasets').post(
    '/api/datasets/export',
    {
      summary:
        'Export a slice into a new dataset commit (same as POST /api/export; 202 + Location); the privacy gate refuses with 422 and the blocking sessions',
      access: 'reviewer',
      body: { name: 'ExportIn', schema: ExportIn },
      successStatus: 202,
      statuses: EXPORT_START_STATUSES,
    },
    ({ body, res, principal, req }) => startExport(deps, res, body, { principal, requestId: String(req.id) }),
  );
}

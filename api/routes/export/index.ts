import type { AppDeps } from '../../deps';
import { EXPORT_START_STATUSES, ExportIn, startExport } from '../../http/exports';
import { RouteGroup } from '../../http/route-group';

/** The `export` group's start route; certificates and scenarios have their own files. */
export function createExportRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('export').post(
    '/api/export',
    {
      summary:
        'Export a slice as COCO, YOLO and Parquet with a coverage datasheet (ExportWorkflow `export-<job_id>`, 202 + Location); the privacy gate refuses with 422 and the blocking sessions',
      access: 'reviewer',
      body: { name: 'ExportIn', schema: ExportIn },
      successStatus: 202,
      statuses: EXPORT_START_STATUSES,
    },
    ({ body, res, principal, req }) => startExport(deps, res, body, { principal, requestId: String(req.id) }),
  );
}

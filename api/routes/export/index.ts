import type { AppDeps } from '../../deps';
import { exportStartRoute } from '../../http/exports';
import { RouteGroup } from '../../http/route-group';

/** The `export` group's start route; certificates and scenarios have their own files. */
export function createExportRoutes(deps: AppDeps): RouteGroup {
  return exportStartRoute(
    deps,
    new RouteGroup('export'),
    '/api/export',
    'Export a slice as COCO, YOLO and Parquet with a coverage datasheet into a new dataset commit',
  );
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `ocr` group: text in a region or over a frame’s vehicle boxes (stub: being built for issue 21). */
export function createOcrRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('ocr');
}

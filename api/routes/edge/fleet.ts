import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The fleet routes of the `edge` group: devices, fleet, telemetry, artifacts (stub: being built for issue 15). */
export function createEdgeFleetRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('edge');
}

import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** The `edge forge` group: compile, benchmark, audit, capabilities, cooptimize, thermal, gate, deployments (stub: being built for issue 15). */
export function createEdgeForgeRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('edge forge');
}

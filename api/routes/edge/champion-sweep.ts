import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

/** POST /api/activelearn/champion-sweep (filed under `edge`) (stub: being built for issue 15). */
export function createChampionSweepRoutes(deps: AppDeps): RouteGroup {
  void deps;
  return new RouteGroup('edge');
}

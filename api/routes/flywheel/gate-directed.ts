import {
  getGateDirectedRun,
  listGateDirectedRuns,
  materializeGateDirectedRun,
} from '../../../activities/flywheel/gate-directed';
import { ALLOCATION_RULE } from '../../../core/flywheel/adaptive';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { GateDirectedQuery, MaterializeIn } from './gate-directed-validators';

/** The `flywheel` group's gate-directed runs (docs/flywheel-gate-directed.md). */
export function createFlywheelGateDirectedRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const params = uuidParams('run_id');
  return new RouteGroup('flywheel')
    .get(
      '/api/flywheel/gate-directed',
      {
        summary:
          'Gate-directed runs (the regressions and failing safety classes of a refused challenger, recorded with the refusal) newest first, by id cursor (pass next_cursor back as cursor), optionally in one state (open, materializing, materialized)',
        access: 'annotator',
        query: GateDirectedQuery,
      },
      async ({ query }) => listGateDirectedRuns(db, query),
    )
    .get(
      '/api/flywheel/gate-directed/{run_id}',
      {
        summary:
          'One gate-directed run: its targets, the refusal it came from, and its cycle once materialized',
        access: 'annotator',
        params,
        statuses: { 404: 'no such run' },
      },
      async ({ params: p }) => getGateDirectedRun(db, p.run_id),
    )
    .post(
      '/api/flywheel/gate-directed/{run_id}/materialize',
      {
        summary: `Turn an open run into an adaptive cycle (origin gate) over its regressions and safety slices (${ALLOCATION_RULE}) and dispatch it into active-learning batches and proposed fleet orders; the run becomes materialized`,
        access: 'reviewer',
        params,
        body: { name: 'MaterializeIn', schema: MaterializeIn },
        statuses: {
          404: 'no such run',
          409: 'the run is not open (materialized, or being materialized)',
          422: 'malformed, or the safety floors exceed the label budget (nothing saved, the run stays open)',
        },
      },
      async ({ params: p, body, principal, req }) =>
        materializeGateDirectedRun(deps, p.run_id, body, actorOf(principal, req)),
    );
}

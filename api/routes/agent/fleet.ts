import { listOrders, moveOrder } from '../../../activities/fleet/orders';
import { planFleet } from '../../../activities/fleet/plan';
import { ORDER_TRANSITIONS } from '../../../core/flywheel/adaptive-orders';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import {
  FleetOrderMoveIn,
  FleetOrderParams,
  FleetOrdersQuery,
  FleetPlanIn,
} from '../flywheel/adaptive-validators';

const STATES = Object.entries(ORDER_TRANSITIONS)
  .map(([from, to]) => `${from} → ${to.length ? to.join(' | ') : '(final)'}`)
  .join('; ');

/** The `agent` group's fleet routes: plans of what to collect and the orders' state machine (docs/flywheel-adaptive.md). */
export function createAgentFleetRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('agent')
    .post(
      '/api/agent/fleet/plan',
      {
        summary:
          "A plan of what the fleet should collect: the latest (or a named) cycle's fleet samples, and `samples` shared across the highest-priority ODD cliques by priority score; saved with its orders proposed",
        access: 'reviewer',
        body: { name: 'FleetPlanIn', schema: FleetPlanIn },
        successStatus: 201,
        statuses: { 404: 'no such cycle', 422: 'malformed, or nothing to collect' },
      },
      async ({ body, principal, req }) => planFleet(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/agent/fleet/orders',
      {
        summary: 'Fleet collection orders newest first, by id cursor, optionally in one state',
        access: 'annotator',
        query: FleetOrdersQuery,
      },
      async ({ query }) => listOrders(db, query),
    )
    .post(
      '/api/agent/fleet/orders/{order_id}/{status}',
      {
        summary: `Move a fleet order (${STATES}); an illegal move is 409; audited`,
        access: 'reviewer',
        params: FleetOrderParams,
        body: { name: 'FleetOrderMoveIn', schema: FleetOrderMoveIn },
        statuses: { 404: 'no such order', 409: 'the order cannot move there from its state' },
      },
      async ({ params, body, principal, req }) =>
        moveOrder(db, params.order_id, params.status, body.note ?? null, actorOf(principal, req)),
    );
}

import { gatherEvidence } from '../../../activities/flywheel/adaptive-evidence';
import {
  createCycle,
  createCycleOrders,
  cycleOut,
  dispatchCycle,
  DISPATCH_MAX_BATCH,
  listCycles,
} from '../../../activities/flywheel/adaptive';
import { ALLOCATION_RULE } from '../../../core/flywheel/adaptive';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup } from '../../http/route-group';
import { AdaptiveAutoIn, AdaptiveIn, CycleOrdersIn, CyclesQuery, DispatchIn } from './adaptive-validators';

const DISPATCH = `each label allocation becomes an active-learning batch (the selection of POST /api/activelearn/select, at most ${DISPATCH_MAX_BATCH} frames) scoped by its classes and sessions, context conditions standing in as the sessions holding such frames, what could not be scoped said per batch; the fleet samples become proposed orders`;

/** The `flywheel` group's adaptive cycles (docs/flywheel-adaptive.md). */
export function createFlywheelAdaptiveRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('flywheel')
    .post(
      '/api/flywheel/adaptive/cycle',
      {
        summary: `Allocate a label budget and fleet samples across regressions and ODD gaps, safety first (${ALLOCATION_RULE}); saved as a planned cycle with each allocation explained`,
        access: 'reviewer',
        body: { name: 'AdaptiveIn', schema: AdaptiveIn },
        successStatus: 201,
        statuses: { 422: 'malformed, the safety floors exceed the label budget, or nothing to allocate to' },
      },
      async ({ body, principal, req }) => {
        const { cycle, result } = await createCycle(db, body, 'manual', {}, actorOf(principal, req));
        return { ...cycleOut(cycle), rule: result.rule, safety_labels: result.safety_labels };
      },
    )
    .get(
      '/api/flywheel/adaptive/cycles',
      {
        summary:
          'Adaptive cycles newest first, by id cursor (pass next_cursor back as cursor), optionally in one state',
        access: 'annotator',
        query: CyclesQuery,
      },
      async ({ query }) => listCycles(db, query),
    )
    .post(
      '/api/flywheel/adaptive/collection-orders',
      {
        summary:
          "Turn a cycle's fleet-sample allocation into proposed fleet collection orders, once per cycle",
        access: 'reviewer',
        body: { name: 'CycleOrdersIn', schema: CycleOrdersIn },
        successStatus: 201,
        statuses: { 404: 'no such cycle', 409: 'the cycle already became orders' },
      },
      async ({ body, principal, req }) => createCycleOrders(db, body.cycle_id, actorOf(principal, req)),
    )
    .post(
      '/api/flywheel/adaptive/dispatch',
      {
        summary: `Dispatch a planned cycle: ${DISPATCH}`,
        access: 'reviewer',
        body: { name: 'DispatchIn', schema: DispatchIn },
        statuses: { 404: 'no such cycle', 409: 'the cycle is not planned (dispatched, or being dispatched)' },
      },
      async ({ body, principal, req }) =>
        dispatchCycle(
          deps,
          body.cycle_id,
          { route_to_review: body.route_to_review },
          actorOf(principal, req),
        ),
    )
    .post(
      '/api/flywheel/adaptive/auto',
      {
        summary: `Compute a cycle from the platform's own evidence (regressions from the latest gate decision's per-slice comparison, ODD gaps from ODD discovery) and dispatch it: ${DISPATCH}. No evidence is refused by name (no_evidence)`,
        access: 'reviewer',
        body: { name: 'AdaptiveAutoIn', schema: AdaptiveAutoIn },
        successStatus: 201,
        statuses: { 422: 'malformed, no_evidence, or the safety floors exceed the label budget' },
      },
      async ({ body, principal, req }) => {
        const actor = actorOf(principal, req);
        const found = await gatherEvidence(db, body);
        const { cycle } = await createCycle(
          db,
          {
            regressions: found.regressions,
            odd_gaps: found.odd_gaps,
            total_label_budget: body.total_label_budget,
            total_fleet_samples: body.total_fleet_samples,
            safety_floor: body.safety_floor,
            safety_slices: body.safety_slices,
          },
          'auto',
          found.evidence,
          actor,
        );
        return dispatchCycle(deps, cycle.id, { route_to_review: body.route_to_review }, actor);
      },
    );
}

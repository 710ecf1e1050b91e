import { DEFAULT_WEIGHTS } from '../../core/activelearn/score';
import type { AppConfig } from '../../core/config';
import { DEFAULT_EMBEDDING_MODEL } from '../../core/curation/embedding';
import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import {
  allocateCycle,
  batchScope,
  type AdaptiveRequest,
  type Allocation,
  type AllocationResult,
  type BatchScope,
} from '../../core/flywheel/adaptive';
import { attributeSql, DENSITY_JOIN } from '../../core/odd/attributes';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { AdaptiveCycle, Prisma } from '../../generated/prisma/client';
import { selectBatch } from '../activelearn/select';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { createOrders, orderOut, type NewOrder } from '../fleet/orders';

/** Adaptive flywheel cycles (docs/flywheel-adaptive.md): saved allocations, their orders and dispatch. */

type CycleActor = Pick<Actor, 'userId' | 'requestId'>;

/** Labels one allocation's batch may pick: what one selection request may (activelearn's SELECT_MAX_BUDGET). */
export const DISPATCH_MAX_BATCH = 500;
/** Sessions a condition may narrow a batch to (activelearn's session_ids bound). */
const CONDITION_MAX_SESSIONS = 1000;

const allocationsOf = (c: AdaptiveCycle) => c.allocations as unknown as Allocation[];

export const cycleOut = (c: AdaptiveCycle) => ({
  cycle_id: c.id,
  origin: c.origin,
  state: c.state,
  request: c.request,
  evidence: c.evidence,
  total_label_budget: c.totalLabelBudget,
  total_fleet_samples: c.totalFleetSamples,
  allocations: allocationsOf(c),
  dispatch: c.dispatch,
  orders_created_at: c.ordersCreatedAt?.toISOString() ?? null,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
  dispatched_at: c.dispatchedAt?.toISOString() ?? null,
});

/** Computes the allocation (a refusal writes nothing) and saves the cycle with its audit entry. */
export async function createCycle(
  db: Db,
  request: AdaptiveRequest,
  origin: 'manual' | 'auto' | 'gate',
  evidence: Record<string, unknown>,
  actor: CycleActor,
): Promise<{ cycle: AdaptiveCycle; result: AllocationResult }> {
  const result = allocateCycle(request);
  const cycle = await db.$transaction(async (tx) => {
    const row = await tx.adaptiveCycle.create({
      data: {
        origin,
        request: request as unknown as Prisma.InputJsonValue,
        evidence: evidence as Prisma.InputJsonValue,
        totalLabelBudget: request.total_label_budget,
        totalFleetSamples: request.total_fleet_samples,
        allocations: result.allocations as unknown as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'flywheel.adaptive.cycle',
      subjectType: 'adaptive_cycle',
      subjectId: row.id,
      detail: { origin, labels: request.total_label_budget, fleet_samples: request.total_fleet_samples },
      requestId: actor.requestId,
    });
    return row;
  });
  return { cycle, result };
}

export async function listCycles(
  db: Db,
  query: { state?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const rows = await db.adaptiveCycle.findMany({
    where: query.state ? { state: query.state } : undefined,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(cycleOut), limit: query.limit, next_cursor };
}

export async function findCycle(db: Db, cycleId: string): Promise<AdaptiveCycle> {
  const cycle = await db.adaptiveCycle.findUnique({ where: { id: cycleId } });
  if (!cycle) throw new NotFoundError(`no adaptive cycle ${cycleId}`);
  return cycle;
}

/** The orders a cycle's fleet-sample allocation becomes: one per target with samples. */
export function cycleOrders(allocations: readonly Allocation[]): NewOrder[] {
  return allocations
    .filter((a) => a.fleet_samples > 0)
    .map((a) => ({
      target: a.slice,
      kind: a.kind,
      conditions: batchScope(a).conditions,
      samples: a.fleet_samples,
      reason: a.reason,
    }));
}

/**
 * Writes the cycle's orders once, under a lock on the cycle row: a second call (or a dispatch after
 * collection-orders) finds them written. `reuse` answers the existing orders instead of a 409.
 */
async function ordersOfCycle(
  tx: Prisma.TransactionClient,
  cycleId: string,
  actor: CycleActor,
  reuse: boolean,
) {
  await tx.$queryRaw`SELECT id FROM adaptive_cycles WHERE id = ${cycleId}::uuid FOR UPDATE`;
  const cycle = await tx.adaptiveCycle.findUnique({ where: { id: cycleId } });
  if (!cycle) throw new NotFoundError(`no adaptive cycle ${cycleId}`);
  if (cycle.ordersCreatedAt) {
    if (!reuse)
      throw new ConflictError(
        `cycle ${cycleId} already became orders at ${cycle.ordersCreatedAt.toISOString()}`,
      );
    return tx.fleetOrder.findMany({ where: { cycleId }, orderBy: { createdAt: 'asc' } });
  }
  const orders = cycleOrders(allocationsOf(cycle));
  const rows = orders.length ? await createOrders(tx, { cycleId }, orders, actor) : [];
  await tx.adaptiveCycle.update({ where: { id: cycleId }, data: { ordersCreatedAt: new Date() } });
  return rows;
}

/** POST …/collection-orders: the cycle's fleet samples as proposed orders, once. */
export async function createCycleOrders(db: Db, cycleId: string, actor: CycleActor) {
  const rows = await db.$transaction((tx) => ordersOfCycle(tx, cycleId, actor, false));
  return { cycle_id: cycleId, orders: rows.map(orderOut) };
}

/** Sessions holding a frame that meets every condition (within `within` when given), at most CONDITION_MAX_SESSIONS. */
async function sessionsMeeting(
  db: Db,
  conditions: BatchScope['conditions'],
  within: readonly string[] | null,
): Promise<string[]> {
  const params: unknown[] = [];
  const param = (v: unknown) => {
    params.push(v);
    return `$${params.length}`;
  };
  const where = conditions.map((c) => `${attributeSql(c.attribute)} = ${param(c.value)}`);
  if (within) where.push(`f.session_id = ANY(${param(within)}::uuid[])`);
  const rows = await db.$queryRawUnsafe<Array<{ session_id: string }>>(
    `SELECT DISTINCT f.session_id::text AS session_id FROM frames f ${DENSITY_JOIN}
      WHERE ${where.join(' AND ')} ORDER BY 1 LIMIT ${CONDITION_MAX_SESSIONS}`,
    ...params,
  );
  return rows.map((r) => r.session_id);
}

export interface DispatchOptions {
  route_to_review: boolean;
}

interface BatchOutcome {
  target: string;
  labels: number;
  batch_id: string | null;
  picked: number;
  routed_objects: number;
  scope: { classes: string[] | null; session_ids: number | null };
  /** What of the slice the batch could not be narrowed to, said plainly. */
  not_scoped: string[];
  skipped: string | null;
}

/** One allocation's batch through the existing selection; a refusal of selection is this batch's outcome, not the dispatch's. */
async function dispatchAllocation(
  deps: { db: Db; config: AppConfig },
  a: Allocation,
  options: DispatchOptions,
  actor: CycleActor,
): Promise<BatchOutcome> {
  const scope = batchScope(a);
  const notScoped = [...scope.not_scoped];
  const budget = Math.min(a.labels, DISPATCH_MAX_BATCH);
  if (a.labels > budget)
    notScoped.push(`${a.labels - budget} of ${a.labels} labels: a batch picks at most ${DISPATCH_MAX_BATCH}`);
  let sessionIds = scope.session_ids;
  if (scope.conditions.length) {
    sessionIds = await sessionsMeeting(deps.db, scope.conditions, scope.session_ids);
    notScoped.push(
      `${scope.conditions.map((c) => `${c.attribute}=${c.value}`).join('|')}: selection cannot filter frames by context, so the batch is drawn from the ${sessionIds.length} sessions holding such frames, and may pick their other frames`,
    );
  }
  const outcome = {
    target: a.target,
    labels: a.labels,
    scope: { classes: scope.classes, session_ids: sessionIds?.length ?? null },
    not_scoped: notScoped,
  };
  const none = { ...outcome, batch_id: null, picked: 0, routed_objects: 0 };
  if (sessionIds && !sessionIds.length)
    return { ...none, skipped: 'no frame carries these conditions: only fleet collection can fill it' };
  try {
    const { saved, picks } = await selectBatch(
      deps,
      {
        budget,
        session_ids: sessionIds ?? undefined,
        classes: scope.classes ?? undefined,
        weights: { ...DEFAULT_WEIGHTS },
        threshold: null,
        model: DEFAULT_EMBEDDING_MODEL,
        route_to_review: options.route_to_review,
      },
      actor,
    );
    return {
      ...outcome,
      batch_id: saved.id,
      picked: picks.length,
      routed_objects: saved.routedObjects,
      skipped: null,
    };
  } catch (err) {
    // No candidate, an unknown class, too large a pool: this target cannot be labelled now.
    if (err instanceof RefusedError || err instanceof InputError || err instanceof NotFoundError)
      return { ...none, skipped: err.message };
    throw err;
  }
}

/**
 * Dispatches a planned cycle: each label allocation becomes an active-learning batch routed to
 * review through selectBatch, the fleet samples become orders. The cycle is claimed first
 * (planned → dispatching), so two dispatches cannot both run; each batch commits in its own
 * transaction (saveBatch), and the orders, the cycle's outcome and the audit entry commit together
 * at the end. A failure part-way puts the cycle back to planned with the batches already made named
 * in its dispatch record, so a retry does not lose track of them (a batch never repeats a frame).
 */
export async function dispatchCycle(
  deps: { db: Db; config: AppConfig },
  cycleId: string,
  options: DispatchOptions,
  actor: CycleActor,
) {
  const { db } = deps;
  const cycle = await findCycle(db, cycleId);
  const claimed = await db.adaptiveCycle.updateMany({
    where: { id: cycleId, state: 'planned' },
    data: { state: 'dispatching' },
  });
  if (!claimed.count)
    throw new ConflictError(`cycle ${cycleId} is ${cycle.state}: only a planned cycle is dispatched`);
  const batches: BatchOutcome[] = [];
  try {
    for (const a of allocationsOf(cycle).filter((x) => x.labels > 0))
      batches.push(await dispatchAllocation(deps, a, options, actor));
    const dispatch = { route_to_review: options.route_to_review, batches };
    return await db.$transaction(async (tx) => {
      const orders = await ordersOfCycle(tx, cycleId, actor, true);
      const row = await tx.adaptiveCycle.update({
        where: { id: cycleId },
        data: {
          state: 'dispatched',
          dispatchedAt: new Date(),
          dispatch: dispatch as unknown as Prisma.InputJsonValue,
        },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'flywheel.adaptive.dispatch',
        subjectType: 'adaptive_cycle',
        subjectId: cycleId,
        detail: {
          batch_ids: batches.flatMap((b) => (b.batch_id ? [b.batch_id] : [])),
          order_ids: orders.map((o) => o.id),
        },
        requestId: actor.requestId,
      });
      return { ...cycleOut(row), orders: orders.map(orderOut) };
    });
  } catch (err) {
    await db.adaptiveCycle.update({
      where: { id: cycleId },
      data: {
        state: 'planned',
        dispatch: { interrupted: true, batches } as unknown as Prisma.InputJsonValue,
      },
    });
    throw err;
  }
}

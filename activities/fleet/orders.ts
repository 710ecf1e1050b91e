import { checkOrderMove, type OrderState } from '../../core/flywheel/adaptive-orders';
import type { TargetKind } from '../../core/flywheel/adaptive';
import { NotFoundError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { FleetOrder, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

/** Fleet collection orders (docs/flywheel-adaptive.md): written by cycles and plans, moved by reviewers. */

export type OrderKind = TargetKind | 'priority';

export interface NewOrder {
  target: string;
  kind: OrderKind;
  conditions: Array<{ attribute: string; value: string }>;
  samples: number;
  reason: string;
}

export const orderOut = (o: FleetOrder) => ({
  order_id: o.id,
  cycle_id: o.cycleId,
  plan_id: o.planId,
  target: o.target,
  kind: o.kind,
  conditions: o.conditions,
  samples: o.samples,
  state: o.state,
  reason: o.reason,
  created_by: o.createdBy,
  created_at: o.createdAt.toISOString(),
  updated_at: o.updatedAt.toISOString(),
});

/** Writes proposed orders inside the caller's transaction, with one audit entry for them all. */
export async function createOrders(
  tx: Prisma.TransactionClient,
  owner: { cycleId: string } | { planId: string },
  orders: readonly NewOrder[],
  actor: Pick<Actor, 'userId' | 'requestId'>,
): Promise<FleetOrder[]> {
  const rows = await tx.fleetOrder.createManyAndReturn({
    data: orders.map((o) => ({
      ...owner,
      target: o.target,
      kind: o.kind,
      conditions: o.conditions,
      samples: o.samples,
      reason: o.reason,
      createdBy: actor.userId,
    })),
  });
  await recordAudit(tx, {
    actorId: actor.userId,
    action: 'fleet.orders.proposed',
    subjectType: 'cycleId' in owner ? 'adaptive_cycle' : 'fleet_plan',
    subjectId: 'cycleId' in owner ? owner.cycleId : owner.planId,
    detail: { order_ids: rows.map((r) => r.id), samples: rows.reduce((s, r) => s + r.samples, 0) },
    requestId: actor.requestId,
  });
  return rows;
}

/** Orders newest first, paged by id cursor, optionally in one state. */
export async function listOrders(
  db: Db,
  query: { state?: OrderState | undefined; limit: number; cursor?: string | undefined },
) {
  const rows = await db.fleetOrder.findMany({
    where: query.state ? { state: query.state } : undefined,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(orderOut), limit: query.limit, next_cursor };
}

/**
 * Moves an order along its state machine (core/flywheel/adaptive-orders.ts): the row is locked, so
 * two reviewers moving one order at once serialize and the second sees the first's state (409).
 */
export async function moveOrder(
  db: Db,
  orderId: string,
  to: OrderState,
  note: string | null,
  actor: Pick<Actor, 'userId' | 'requestId'>,
) {
  return db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT id FROM fleet_orders WHERE id = ${orderId}::uuid FOR UPDATE`;
    const order = await tx.fleetOrder.findUnique({ where: { id: orderId } });
    if (!order) throw new NotFoundError(`no fleet order ${orderId}`);
    checkOrderMove(orderId, order.state, to);
    const moved = await tx.fleetOrder.update({ where: { id: orderId }, data: { state: to } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: `fleet.order.${to}`,
      subjectType: 'fleet_order',
      subjectId: orderId,
      detail: { from: order.state, to, note },
      requestId: actor.requestId,
    });
    return orderOut(moved);
  });
}

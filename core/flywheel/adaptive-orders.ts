import { ConflictError } from '../errors';

/**
 * Fleet collection orders (docs/flywheel-adaptive.md). An order is proposed by a cycle or a plan; a
 * reviewer approves it before any vehicle time is spent, marks it dispatched once the fleet has it,
 * and fulfilled once the recordings are in. Any order not yet fulfilled may be cancelled;
 * fulfilled and cancelled are final.
 */
export const ORDER_STATES = ['proposed', 'approved', 'dispatched', 'fulfilled', 'cancelled'] as const;
export type OrderState = (typeof ORDER_STATES)[number];

/** The states an order may be moved to (the route's `{status}`): never back to proposed. */
export const ORDER_MOVES = ['approved', 'dispatched', 'fulfilled', 'cancelled'] as const;
export type OrderMove = (typeof ORDER_MOVES)[number];

export const ORDER_TRANSITIONS: Readonly<Record<OrderState, readonly OrderState[]>> = {
  proposed: ['approved', 'cancelled'],
  approved: ['dispatched', 'cancelled'],
  dispatched: ['fulfilled', 'cancelled'],
  fulfilled: [],
  cancelled: [],
};

export const isOrderState = (s: string): s is OrderState => (ORDER_STATES as readonly string[]).includes(s);

/** Throws ConflictError (409) naming the legal moves when `from → to` is not one. */
export function checkOrderMove(orderId: string, from: string, to: OrderState): void {
  const legal = isOrderState(from) ? ORDER_TRANSITIONS[from] : [];
  if (!legal.includes(to))
    throw new ConflictError(
      `order ${orderId} is ${from}: it cannot become ${to} (${legal.length ? `it may become ${legal.join(' or ')}` : 'that state is final'})`,
      { from, to, legal: [...legal] },
    );
}

import { NotFoundError, RefusedError } from '../../core/errors';
import type { Allocation } from '../../core/flywheel/adaptive';
import { largestRemainder } from '../../core/odd/bandit';
import { parseClique } from '../../core/odd/clique';
import type { Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { cliquePriority } from '../odd/cliques';
import { cycleOrders } from '../flywheel/adaptive';
import { createOrders, orderOut, type NewOrder } from './orders';

/**
 * A plan of what the fleet should collect (POST /api/agent/fleet/plan, docs/flywheel-adaptive.md):
 * the latest (or a named) cycle's fleet-sample allocation as it stands, plus `samples` new samples
 * shared across the highest-priority ODD cliques by their priority score (largest remainder), saved
 * with its orders proposed.
 */
export interface PlanRequest {
  samples: number;
  cliques: number;
  cycle_id: string | null;
  include_cycle: boolean;
}

export async function planFleet(db: Db, req: PlanRequest, actor: Pick<Actor, 'userId' | 'requestId'>) {
  const cycle = !req.include_cycle
    ? null
    : req.cycle_id
      ? await db.adaptiveCycle.findUnique({ where: { id: req.cycle_id } })
      : await db.adaptiveCycle.findFirst({ orderBy: [{ createdAt: 'desc' }, { id: 'desc' }] });
  if (req.cycle_id && !cycle) throw new NotFoundError(`no adaptive cycle ${req.cycle_id}`);
  const { priority, frames } = await cliquePriority(db, {}, { sizes: [2], limit: req.cliques });
  const shares = largestRemainder(
    priority.map((p) => p.score),
    req.samples,
  );
  const fromPriority: NewOrder[] = priority.flatMap((p, i) =>
    shares[i]
      ? [
          {
            target: p.clique,
            kind: 'priority' as const,
            conditions: parseClique(p.clique, 'clique'),
            samples: shares[i],
            reason: `ODD priority rank ${p.rank} (score ${p.score.toFixed(4)}): ${shares[i]} of ${req.samples} samples by score; ${p.reason}`,
          },
        ]
      : [],
  );
  const allocated = shares.reduce((s, n) => s + n, 0);
  // Every clique scoring 0 (nothing rare, nothing under target) leaves the samples unplaced: said, not hidden.
  const unallocated = req.samples - allocated;
  const fromCycle = cycle ? cycleOrders(cycle.allocations as unknown as Allocation[]) : [];
  const orders = [...fromCycle, ...fromPriority];
  if (!orders.length)
    throw new RefusedError(
      'nothing_to_collect: no cycle with fleet samples and no ODD clique to prioritise (the corpus has no frames with context)',
      { rule: 'nothing_to_collect', frames },
    );
  return db.$transaction(async (tx) => {
    const plan = await tx.fleetPlan.create({
      data: {
        cycleId: cycle?.id ?? null,
        basis: {
          request: req,
          corpus_frames: frames,
          cycle_orders: fromCycle.length,
          priority_orders: fromPriority.length,
          unallocated_samples: unallocated,
          ...(unallocated
            ? {
                unallocated_reason: `no priority clique scores above 0 for ${unallocated} samples (nothing rare or under target)`,
              }
            : {}),
        } as unknown as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    const rows = await createOrders(tx, { planId: plan.id }, orders, actor);
    return {
      plan_id: plan.id,
      cycle_id: plan.cycleId,
      created_at: plan.createdAt.toISOString(),
      basis: plan.basis,
      samples: rows.reduce((s, r) => s + r.samples, 0),
      orders: rows.map(orderOut),
    };
  });
}

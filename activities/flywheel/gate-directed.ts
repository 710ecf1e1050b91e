import type { AppConfig } from '../../core/config';
import { ConflictError, NotFoundError } from '../../core/errors';
import {
  gateDirectedRequest,
  gateDirectedTargets,
  type GateDirectedBudgets,
  type GateDirectedTargets,
} from '../../core/flywheel/gate-directed';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { GateDirectedRun, Prisma, Promotion } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { EventHub } from '../../runtime/event-hub';
import { orderOut } from '../fleet/orders';
import { classNames } from '../registry/evaluation';
import { createCycle, cycleOut, dispatchCycle, findCycle } from './adaptive';

/**
 * Gate-directed runs (docs/flywheel-gate-directed.md): the places a refused challenger fell short,
 * recorded with the refusal, and materialized on request into an adaptive cycle (origin `gate`)
 * that is dispatched at once into active-learning batches and fleet orders.
 */

type RunActor = Pick<Actor, 'userId' | 'requestId'>;

export const GATE_DIRECTED_STATES = ['open', 'materializing', 'materialized'] as const;

/**
 * The run a just-recorded gate decision opens, written in the decision's own transaction so a
 * refusal never exists without it; null when the decision opens none (core's gateDirectedTargets).
 */
export async function recordGateDirectedRun(
  tx: Prisma.TransactionClient,
  promotion: Promotion,
  cfg: AppConfig['flywheel'],
): Promise<GateDirectedRun | null> {
  if (!promotion.championVersion) return null;
  const targets = gateDirectedTargets(promotion, await classNames(tx), {
    metric: cfg.gateDirectedMetric,
    min_drop: cfg.gateDirectedMinDrop,
  });
  if (!targets) return null;
  return tx.gateDirectedRun.create({
    data: {
      promotionId: promotion.id,
      challengerVersion: promotion.challengerVersion,
      championVersion: promotion.championVersion,
      targets: targets as unknown as Prisma.InputJsonValue,
    },
  });
}

const targetsOf = (run: GateDirectedRun) => run.targets as unknown as GateDirectedTargets;

export function gateDirectedRunOut(
  run: GateDirectedRun,
  promotion: Promotion | null,
  cycle: ReturnType<typeof cycleOut> | null,
) {
  return {
    run_id: run.id,
    promotion_id: run.promotionId,
    challenger_version: run.challengerVersion,
    champion_version: run.championVersion,
    state: run.state,
    targets: targetsOf(run),
    cycle_id: run.cycleId,
    cycle,
    materialized_by: run.materializedBy,
    created_at: run.createdAt.toISOString(),
    materialized_at: run.materializedAt?.toISOString() ?? null,
    promotion: promotion && {
      outcome: promotion.outcome,
      rule: promotion.rule,
      reasons: promotion.reasons,
      gold_id: promotion.goldId,
      created_at: promotion.createdAt.toISOString(),
    },
  };
}

/** The runs with their promotions and cycles, read in one query each. */
async function runsOut(db: Db, runs: readonly GateDirectedRun[]) {
  const [promotions, cycles] = await Promise.all([
    db.promotion.findMany({ where: { id: { in: runs.map((r) => r.promotionId) } } }),
    db.adaptiveCycle.findMany({ where: { id: { in: runs.flatMap((r) => (r.cycleId ? [r.cycleId] : [])) } } }),
  ]);
  const promotionById = new Map(promotions.map((p) => [p.id, p]));
  const cycleById = new Map(cycles.map((c) => [c.id, c]));
  return runs.map((r) => {
    const cycle = r.cycleId ? cycleById.get(r.cycleId) : undefined;
    return gateDirectedRunOut(r, promotionById.get(r.promotionId) ?? null, cycle ? cycleOut(cycle) : null);
  });
}

export async function listGateDirectedRuns(
  db: Db,
  query: { state?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const rows = await db.gateDirectedRun.findMany({
    where: query.state ? { state: query.state } : undefined,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: await runsOut(db, page), limit: query.limit, next_cursor };
}

async function findRun(db: Db, runId: string): Promise<GateDirectedRun> {
  const run = await db.gateDirectedRun.findUnique({ where: { id: runId } });
  if (!run) throw new NotFoundError(`no gate-directed run ${runId}`);
  return run;
}

export async function getGateDirectedRun(db: Db, runId: string) {
  const [out] = await runsOut(db, [await findRun(db, runId)]);
  return out!;
}

export interface MaterializeOptions extends GateDirectedBudgets {
  route_to_review: boolean;
}

/**
 * The run's cycle dispatched: the one an earlier, failed materialize already made (so a retry
 * allocates the labels once), else a new one from the targets. A cycle already dispatched is only
 * read back (the failure came after its dispatch committed).
 */
async function dispatchedCycle(
  deps: { db: Db; config: AppConfig },
  run: GateDirectedRun,
  options: MaterializeOptions,
  actor: RunActor,
) {
  const { db } = deps;
  let cycleId = run.cycleId;
  if (!cycleId) {
    const { route_to_review: _, ...budgets } = options;
    const { cycle } = await createCycle(
      db,
      gateDirectedRequest(targetsOf(run), budgets),
      'gate',
      { gate_directed_run_id: run.id, promotion_id: run.promotionId },
      actor,
    );
    cycleId = cycle.id;
    await db.gateDirectedRun.update({ where: { id: run.id }, data: { cycleId } });
  }
  const cycle = await findCycle(db, cycleId);
  if (cycle.state !== 'dispatched')
    return dispatchCycle(deps, cycleId, { route_to_review: options.route_to_review }, actor);
  const orders = await db.fleetOrder.findMany({ where: { cycleId }, orderBy: { createdAt: 'asc' } });
  return { ...cycleOut(cycle), orders: orders.map(orderOut) };
}

/**
 * Materializes an open run: claimed `open → materializing` (a second materialize, concurrent or
 * later, is a 409), its cycle made and dispatched, then `materialized` with the audit entry. Any
 * failure puts the run back to `open`; a refused allocation (422) has saved no cycle.
 */
export async function materializeGateDirectedRun(
  deps: { db: Db; config: AppConfig; events: Pick<EventHub, 'publish'> },
  runId: string,
  options: MaterializeOptions,
  actor: RunActor,
) {
  const { db } = deps;
  const seen = await findRun(db, runId);
  const claimed = await db.gateDirectedRun.updateMany({
    where: { id: runId, state: 'open' },
    data: { state: 'materializing' },
  });
  if (!claimed.count)
    throw new ConflictError(`gate-directed run ${runId} is ${seen.state}: only an open run is materialized`);
  let materialized;
  try {
    // Read after the claim: a materialize that failed meanwhile may have left its cycle on the run.
    const run = await findRun(db, runId);
    const cycle = await dispatchedCycle(deps, run, options, actor);
    const { row, promotion } = await db.$transaction(async (tx) => {
      const row = await tx.gateDirectedRun.update({
        where: { id: runId },
        data: { state: 'materialized', materializedBy: actor.userId, materializedAt: new Date() },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'flywheel.gate_directed.materialize',
        subjectType: 'gate_directed_run',
        subjectId: runId,
        detail: {
          promotion_id: row.promotionId,
          cycle_id: cycle.cycle_id,
          labels: cycle.total_label_budget,
          fleet_samples: cycle.total_fleet_samples,
        },
        requestId: actor.requestId,
      });
      return { row, promotion: await tx.promotion.findUnique({ where: { id: row.promotionId } }) };
    });
    materialized = { ...gateDirectedRunOut(row, promotion, null), cycle };
  } catch (err) {
    await db.gateDirectedRun.update({ where: { id: runId }, data: { state: 'open' } });
    throw err;
  }
  // After the claim's try: the run is materialized whatever happens to this notice.
  await deps.events.publish('jobs', 'flywheel.gate_directed.materialized', {
    run_id: materialized.run_id,
    promotion_id: materialized.promotion_id,
    cycle_id: materialized.cycle.cycle_id,
    state: materialized.state,
  });
  return materialized;
}

import type { FlywheelTurnState } from '../../core/flywheel/agent';
import type { Db } from '../db';

/** At most this many new sessions are read per turn (the route's max_sessions bound). */
export const TURN_MAX_SESSIONS = 20;

/**
 * What the flywheel agent's turn is decided from (core/flywheel/agent.ts): open gate-directed runs,
 * sessions that are ready, not quarantined, hold frames, are in no sealed gold set and have never
 * had a flywheel run, the runs still running, and the reviews since the newest run started.
 */
export async function readFlywheelTurn(db: Db, maxSessions: number): Promise<FlywheelTurnState> {
  const [open, sessions, running, newest] = await Promise.all([
    db.gateDirectedRun.findMany({ where: { state: 'open' }, orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] }),
    db.$queryRaw<Array<{ id: string }>>`
      SELECT s.id::text AS id FROM sessions s
      WHERE s.state = 'ready' AND NOT s.quarantined AND s.frame_count > 0
        AND NOT EXISTS (SELECT 1 FROM flywheel_runs r WHERE r.session_id = s.id)
        AND NOT EXISTS (SELECT 1 FROM gold_sets g WHERE g.sealed_at IS NOT NULL AND s.id = ANY (g.session_ids))
      ORDER BY s.created_at, s.id
      LIMIT ${Math.min(maxSessions, TURN_MAX_SESSIONS)}`,
    db.flywheelRun.count({ where: { status: 'running' } }),
    db.flywheelRun.findFirst({
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { createdAt: true },
    }),
  ]);
  const reviews = await db.review.count({ where: newest ? { createdAt: { gt: newest.createdAt } } : {} });
  return {
    openGateDirected: open.map((g) => ({
      run_id: g.id,
      challenger_version: g.challengerVersion,
      targets:
        ((g.targets as { regressions?: unknown[] }).regressions?.length ?? 0) +
        ((g.targets as { safety_slices?: unknown[] }).safety_slices?.length ?? 0),
    })),
    newSessions: sessions.map((s) => s.id),
    running,
    reviewsSinceLastRun: reviews,
  };
}

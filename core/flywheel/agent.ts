/**
 * The flywheel agent's turn (docs/flywheel.md "The flywheel agent"): from what the platform holds
 * now, the next things to do, each with why. Pure: the reads are activities/flywheel/agent.ts's,
 * the acts the route's.
 */

export interface FlywheelTurnState {
  /** Gate refusals whose slices nobody has collected for yet. */
  openGateDirected: ReadonlyArray<{ run_id: string; challenger_version: string; targets: number }>;
  /** Ingested sessions never taken through the flywheel, oldest first. */
  newSessions: readonly string[];
  /** Flywheel runs still running. */
  running: number;
  /** Reviews recorded since the newest flywheel run started (all of them when there was none). */
  reviewsSinceLastRun: number;
}

export type FlywheelAction =
  | { action: 'materialize_gate_directed'; gate_directed_run_id: string; why: string }
  | { action: 'run_session'; session_id: string; why: string }
  | { action: 'training_cycle'; why: string }
  | { action: 'idle'; why: string };

/**
 * The rule, in order: collect where the gate refused (each open gate-directed run is materialized);
 * take new drives through the flywheel (at most `maxSessions`); with neither and nothing running,
 * retrain when people have reviewed since the last run; else nothing to do, and why.
 */
export function planFlywheelTurn(state: FlywheelTurnState, opts: { maxSessions: number }): FlywheelAction[] {
  const actions: FlywheelAction[] = state.openGateDirected.map((g) => ({
    action: 'materialize_gate_directed',
    gate_directed_run_id: g.run_id,
    why: `the gate refused ${g.challenger_version}: ${g.targets} slice(s) where it fell short need data`,
  }));
  for (const sessionId of state.newSessions.slice(0, opts.maxSessions))
    actions.push({
      action: 'run_session',
      session_id: sessionId,
      why: 'ingested and never taken through the flywheel',
    });
  const sessionActs = actions.some((a) => a.action === 'run_session');
  if (!sessionActs && state.running === 0 && state.reviewsSinceLastRun > 0)
    actions.push({
      action: 'training_cycle',
      why: `${state.reviewsSinceLastRun} review(s) recorded since the last flywheel run: retrain on them`,
    });
  if (actions.length) return actions;
  const why =
    state.running > 0
      ? `${state.running} flywheel run(s) still running and no new drive or gate refusal: wait for them`
      : 'no new drive, no gate refusal to collect for, and no review since the last flywheel run';
  return [{ action: 'idle', why }];
}

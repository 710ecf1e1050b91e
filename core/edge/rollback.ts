import type { GateOutcome, GateRule } from './gate';

/**
 * Rollout decisions (docs/edge-rollout.md). A stage is checked while it soaks and once more when
 * it ends (its timer runs out, or an operator advances it): a breach rolls the rollout back at
 * once; at the end only a pass advances — a stage that could not show enough evidence fails
 * closed and rolls back too.
 */
export type StageDecision = 'wait' | 'advance' | 'rollback';

export function stageDecision(outcome: GateOutcome, final: boolean): StageDecision {
  if (outcome === 'breach') return 'rollback';
  if (!final) return 'wait';
  return outcome === 'pass' ? 'advance' : 'rollback';
}

/** Why a rollout went back: a gate rule, an operator's abort, or a failure of the rollout itself. */
export type RollbackRule = GateRule | 'operator' | 'rollout_failed';

/** What each device of the rollout's fleet snapshot was assigned before it: device id → artifact id or null. */
export type PreviousAssignments = Record<string, string | null>;

/**
 * The assignments a rollback writes: every device of the snapshot that still carries the rolled-back
 * artifact goes back to what it had before. A device whose assignment has since moved to something
 * else is left alone (the rollout no longer owns it).
 */
export function rollbackAssignments(
  previous: PreviousAssignments,
  current: ReadonlyArray<{ id: string; assignedArtifactId: string | null }>,
  artifactId: string,
): Array<{ deviceId: string; artifactId: string | null }> {
  return current
    .filter((d) => d.id in previous && d.assignedArtifactId === artifactId && previous[d.id] !== artifactId)
    .map((d) => ({ deviceId: d.id, artifactId: previous[d.id] ?? null }));
}

/** A device as the fleet view shows it: never heard from, heard from recently (running fine or failing), or silent. */
export type DeviceState = 'registered' | 'online' | 'failing' | 'offline';

export function deviceState(
  lastSeenAt: Date | null,
  lastStatusFailing: boolean,
  now: Date,
  offlineAfterSeconds: number,
): DeviceState {
  if (!lastSeenAt) return 'registered';
  if (now.getTime() - lastSeenAt.getTime() > offlineAfterSeconds * 1000) return 'offline';
  return lastStatusFailing ? 'failing' : 'online';
}

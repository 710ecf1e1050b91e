import { minCostAssignment } from './assignment';

/**
 * Track identities across a retrack (docs/tracks.md "Identities across retracks"), pure: each new
 * track continues the old track it shares the most objects with, one to one, so a retrack after an
 * auto-label run keeps the ids that track events, intents, keyframes and people's edits hang on.
 * A person's object weighs far more than a machine one: when the tracker's new tracks split what
 * an old track held, the part with the person's boxes keeps the identity.
 */

/** How much one of a person's objects counts against machine ones when identities are carried. */
export const HUMAN_OBJECT_WEIGHT = 1000;

export interface OldTrackMember {
  objectId: string;
  trackId: string;
  human: boolean;
}

/** For each new track (given as the ids of its objects), the old track id it continues, or null. */
export function carryTrackIds(
  old: readonly OldTrackMember[],
  newTracks: ReadonlyArray<readonly string[]>,
): Array<string | null> {
  const membership = new Map(old.map((m) => [m.objectId, m]));
  const oldIds = [...new Set(old.map((m) => m.trackId))].sort();
  const column = new Map(oldIds.map((id, i) => [id, i]));
  const shared = newTracks.map((objectIds) => {
    const row = oldIds.map(() => 0);
    for (const id of objectIds) {
      const m = membership.get(id);
      if (m) row[column.get(m.trackId)!]! += m.human ? HUMAN_OBJECT_WEIGHT : 1;
    }
    return row;
  });
  const carried: Array<string | null> = newTracks.map(() => null);
  if (!oldIds.length || !newTracks.length) return carried;
  const most = Math.max(...shared.flat());
  for (const [r, c] of minCostAssignment(shared.map((row) => row.map((w) => most - w))))
    if (shared[r]![c]! > 0) carried[r] = oldIds[c]!;
  return carried;
}

import { isMachineSource } from '../objects/sources';
import { classMoveRefusal, type ClassGroups, type ClassMoveRefusal } from '../ontology/class-moves';

/**
 * Track relabel backfill (docs/quality.md "Track relabel backfill"), pure: where a person named an
 * object's class on some frames of a track, the track's machine objects on the other frames take
 * that class — by the same class-move rule as a track relabel, so a backfill never makes a move a
 * reviewer could not make by hand.
 */

export interface BackfillObject {
  objectId: string;
  frameIndex: number;
  source: string;
  state: string;
  class: ClassGroups;
}

export type BackfillSkip = 'no_human_label' | 'humans_disagree' | 'nothing_to_move' | 'implausible_move';

export interface BackfillPlan {
  /** The class people gave the track (null when they gave none, or disagree evenly). */
  target: string | null;
  /** Each class people gave on the track, with how many of their objects gave it. */
  human_votes: Record<string, number>;
  action: 'relabel' | 'skip';
  reason?: BackfillSkip;
  /** The machine objects that would move, in frame order. */
  moves: Array<{ object_id: string; frame_index: number; from_class: string }>;
  /** The moves the class-move rule refuses (a skip reason `implausible_move` lists them). */
  refused: ClassMoveRefusal[];
}

/**
 * The track's target is the class most of its human objects (source `human`, not rejected) have;
 * a tie between the most-given classes is no target (people disagree, a person should decide).
 * Moving: the machine objects of another class, not rejected. A track with any implausible move is
 * skipped whole, as a track relabel refuses whole.
 */
export function planRelabelBackfill(objects: readonly BackfillObject[]): BackfillPlan {
  const live = objects.filter((o) => o.state !== 'rejected');
  const votes: Record<string, number> = {};
  for (const o of live) if (o.source === 'human') votes[o.class.name] = (votes[o.class.name] ?? 0) + 1;
  const ranked = Object.entries(votes).sort((a, b) => b[1] - a[1]);
  const base = { human_votes: votes, moves: [], refused: [] };
  if (!ranked.length) return { ...base, target: null, action: 'skip', reason: 'no_human_label' };
  if (ranked.length > 1 && ranked[0]![1] === ranked[1]![1])
    return { ...base, target: null, action: 'skip', reason: 'humans_disagree' };
  const targetName = ranked[0]![0];
  const target = live.find((o) => o.source === 'human' && o.class.name === targetName)!.class;
  const moving = live
    .filter((o) => isMachineSource(o.source) && o.class.name !== targetName)
    .sort((a, b) => a.frameIndex - b.frameIndex);
  const moves = moving.map((o) => ({
    object_id: o.objectId,
    frame_index: o.frameIndex,
    from_class: o.class.name,
  }));
  const refused = [
    ...new Map(
      moving.flatMap((o) => {
        const r = classMoveRefusal(o.class, target);
        return r ? [[o.class.name, r] as const] : [];
      }),
    ).values(),
  ];
  if (refused.length)
    return {
      target: targetName,
      human_votes: votes,
      action: 'skip',
      reason: 'implausible_move',
      moves,
      refused,
    };
  if (!moves.length) return { ...base, target: targetName, action: 'skip', reason: 'nothing_to_move' };
  return { target: targetName, human_votes: votes, action: 'relabel', moves, refused: [] };
}

import { assignBelow } from '../tracking/assignment';
import { meanRowDistance, type Point } from './polyline';

/**
 * Linking a session's lanes into lane groups (POST /api/sessions/{session_id}/lanes/link,
 * docs/lanes.md "Link"): between each frame that has lanes and the next one that has lanes, the
 * cost of a pair is the mean horizontal distance of the two polylines over the rows they share; a
 * one-to-one assignment (Hungarian, pairs under the limit only) carries a lane's chain on. Each
 * chain is one group: it keeps a group id one of its lanes already had (the first, when no earlier
 * chain took it), so linking again changes nothing.
 */

export interface LinkParams {
  /** Pairs further apart than this share of the frame width (at least `minDistancePx`) are never linked. */
  maxDistanceFrac: number;
  minDistancePx: number;
  /** Rows sampled per pair, and the share of the shorter lane's rows the two must share. */
  samples: number;
  minOverlap: number;
}

export const DEFAULT_LINK: LinkParams = {
  maxDistanceFrac: 0.03,
  minDistancePx: 4,
  samples: 16,
  minOverlap: 0.3,
};

/** The distance under which two lanes of a `width`-px frame may be the same lane. */
export const sameLaneLimitPx = (width: number, params: LinkParams = DEFAULT_LINK) =>
  Math.max(params.minDistancePx, params.maxDistanceFrac * width);

export interface LinkFrame {
  frameId: string;
  width: number;
  lanes: Array<{ id: string; points: Point[]; groupId: string | null }>;
}

export interface Linked {
  /** The group id of every lane. */
  groups: Map<string, string>;
  /** Lanes linked to a lane of the frame before. */
  pairs: number;
  chains: number;
}

/** `frames` in session order (by timestamp); `newId` names a chain no lane had a group id for. */
export function linkLanes(
  frames: readonly LinkFrame[],
  newId: () => string,
  params: LinkParams = DEFAULT_LINK,
  maxDistancePx?: number,
): Linked {
  const chains: string[][] = [];
  const chainOf = new Map<string, number>();
  let pairs = 0;
  let prev: LinkFrame | null = null;
  for (const frame of frames) {
    if (frame.lanes.length === 0) continue;
    const matched = new Map<number, number>();
    if (prev) {
      const limit = maxDistancePx ?? sameLaneLimitPx(frame.width, params);
      const cost = prev.lanes.map((a) =>
        frame.lanes.map((b) => meanRowDistance(a.points, b.points, params.samples, params.minOverlap)),
      );
      for (const [i, j] of assignBelow(cost, limit)) matched.set(j, chainOf.get(prev.lanes[i]!.id)!);
    }
    frame.lanes.forEach((lane, j) => {
      const chain = matched.get(j);
      if (chain === undefined) {
        chainOf.set(lane.id, chains.length);
        chains.push([lane.id]);
      } else {
        pairs++;
        chainOf.set(lane.id, chain);
        chains[chain]!.push(lane.id);
      }
    });
    prev = frame;
  }
  const groupOf = new Map(frames.flatMap((f) => f.lanes.map((l) => [l.id, l.groupId] as const)));
  const taken = new Set<string>();
  const groups = new Map<string, string>();
  for (const chain of chains) {
    const kept = chain.map((id) => groupOf.get(id)).find((g): g is string => !!g && !taken.has(g));
    const group = kept ?? newId();
    taken.add(group);
    for (const id of chain) groups.set(id, group);
  }
  return { groups, pairs, chains: chains.length };
}

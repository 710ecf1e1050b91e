import { ConflictError, NotAllowedError } from '../errors';
import type { CallerRole } from './states';

/** Kinds of non-frame data an asset can hold (GET /api/assets/kinds). */
export const ASSET_KINDS = [
  'image',
  'video',
  'audio',
  'text',
  'document',
  'point_cloud',
  'time_series',
  'map_tile',
] as const;

/**
 * Asset lifecycle (the spec leaves it open; docs/annotations.md):
 * new → in_progress → submitted → reviewed; submitted and reviewed can be reopened to
 * in_progress; any state can be archived, and an archived asset comes back as new.
 */
export const ASSET_STATES = ['new', 'in_progress', 'submitted', 'reviewed', 'archived'] as const;
export type AssetState = (typeof ASSET_STATES)[number];

const MOVES: Record<AssetState, readonly AssetState[]> = {
  new: ['in_progress', 'archived'],
  in_progress: ['submitted', 'archived'],
  submitted: ['reviewed', 'in_progress', 'archived'],
  reviewed: ['in_progress', 'archived'],
  archived: ['new'],
};

/**
 * Moves that judge or retire work need a reviewer: marking it reviewed, reopening reviewed work,
 * archiving, and bringing an archived asset back. An annotator starts, submits and withdraws a
 * submission (docs/annotations.md).
 */
const REVIEWER_MOVES: ReadonlyArray<readonly [AssetState | '*', AssetState]> = [
  ['*', 'reviewed'],
  ['*', 'archived'],
  ['archived', 'new'],
  ['reviewed', 'in_progress'],
];

/**
 * Refuses a move the lifecycle does not have (409: the asset's state does not allow it), then one
 * the caller's role may not make (403).
 */
export function checkAssetMove(from: string, to: AssetState, role: CallerRole): void {
  const allowed = MOVES[from as AssetState] ?? [];
  if (!allowed.includes(to))
    throw new ConflictError(
      `an asset in state ${from} cannot move to ${to}; allowed: ${allowed.join(', ') || 'none'}`,
    );
  const needsReviewer = REVIEWER_MOVES.some(([f, t]) => (f === '*' || f === from) && t === to);
  if (needsReviewer && role === 'annotator')
    throw new NotAllowedError(
      `moving an asset from ${from} to ${to} needs the reviewer role; you are annotator`,
    );
}

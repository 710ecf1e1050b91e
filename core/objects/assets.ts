import { ConflictError } from '../errors';

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

/** Refuses a move the lifecycle does not have (409: the asset's state does not allow it). */
export function checkAssetMove(from: string, to: AssetState): void {
  const allowed = MOVES[from as AssetState] ?? [];
  if (!allowed.includes(to))
    throw new ConflictError(
      `an asset in state ${from} cannot move to ${to}; allowed: ${allowed.join(', ') || 'none'}`,
    );
}

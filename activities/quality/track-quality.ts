import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import { findTrackGaps } from '../../core/tracking/gaps';
import { planRelabelBackfill } from '../../core/tracking/relabel-backfill';
import type { Actor } from '../annotations/objects';
import type { MaskStore } from '../annotations/masks';
import type { Db } from '../db';
import { interpolateTrack, readTrackView } from '../tracks/interpolate';
import { requireSession } from '../sessions';
import { relabelTrack } from '../tracks/relabel';

/**
 * Quality along tracks (docs/quality.md "Quality along tracks"): the gaps inside tracks filled by
 * interpolation, and the class people gave a track backfilled to its machine objects. Each has a
 * plan (reads only) and an apply; an apply re-plans each track under its own write, so what it
 * does is what the plan says for the track as it is then.
 */

/** Most tracks one request plans or applies: a session's worth, so one request stays short. */
export const TRACKS_PER_REQUEST = 1000;

export interface TrackScope {
  session_id?: string | undefined;
  track_ids?: string[] | undefined;
}

/** The scope's tracks, oldest first (404 for an unknown session or track, 422 past the bound). */
async function tracksInScope(db: Db, scope: TrackScope): Promise<string[]> {
  if (scope.session_id) await requireSession(db, scope.session_id);
  const ids = scope.track_ids ? [...new Set(scope.track_ids)] : null;
  const rows = await db.track.findMany({
    where: {
      ...(scope.session_id ? { sessionId: scope.session_id } : {}),
      ...(ids ? { id: { in: ids } } : {}),
    },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: TRACKS_PER_REQUEST + 1,
    select: { id: true },
  });
  if (ids) {
    const found = new Set(rows.map((r) => r.id));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length)
      throw new NotFoundError(
        `${missing.length} track(s) do not exist${scope.session_id ? ` in session ${scope.session_id}` : ''}`,
        { missing },
      );
  }
  if (rows.length > TRACKS_PER_REQUEST)
    throw new InputError(`the scope holds more than ${TRACKS_PER_REQUEST} tracks; name at most that many`, [
      { field: 'track_ids', message: `at most ${TRACKS_PER_REQUEST} tracks per request` },
    ]);
  return rows.map((r) => r.id);
}

// ---- Track gap fill ----

/** GET /api/quality/track-gap-fill/plan: every gap of the scope's tracks, and what a fill would do. */
export async function planTrackGapFill(db: Db, scope: TrackScope, maxGap: number) {
  const tracks = await tracksInScope(db, scope);
  const items = [];
  for (const trackId of tracks) {
    const view = await readTrackView(db, trackId);
    for (const g of findTrackGaps(view.frames, view.objects, maxGap))
      items.push({
        track_id: trackId,
        from_object_id: g.span.from.objectId,
        to_object_id: g.span.to.objectId,
        class_name: g.span.from.className,
        missing_frames: g.missing.map((f) => ({ frame_id: f.frameId, frame_index: f.index })),
        action: g.action,
        ...(g.reason ? { reason: g.reason } : {}),
      });
  }
  const filling = items.filter((i) => i.action === 'fill');
  return {
    max_gap: maxGap,
    tracks: tracks.length,
    gaps: items.length,
    fillable: filling.length,
    frames_to_fill: filling.reduce((n, i) => n + i.missing_frames.length, 0),
    items,
  };
}

/**
 * POST /api/quality/track-gap-fill: fills the fillable gaps of each track as one interpolation of
 * that track (`gap-fill` mode: its lock, its refusals, its audit), track by track. A track whose
 * objects a person changed meanwhile is reported `conflict` with nothing written to it; the others
 * are filled.
 */
export async function applyTrackGapFill(db: Db, scope: TrackScope, maxGap: number, actor: Actor) {
  const tracks = await tracksInScope(db, scope);
  const results = [];
  for (const trackId of tracks) {
    const view = await readTrackView(db, trackId);
    if (!findTrackGaps(view.frames, view.objects, maxGap).some((g) => g.action === 'fill')) continue;
    try {
      const out = await interpolateTrack(db, trackId, { mode: 'gap-fill', maxGap }, actor);
      results.push({
        track_id: trackId,
        outcome: 'filled',
        created: out.created,
        updated: out.updated,
        left: out.left,
      });
    } catch (err) {
      // Changed between the plan and the write: another gap-filler or a person got there first.
      if (!(err instanceof ConflictError || err instanceof RefusedError)) throw err;
      results.push({ track_id: trackId, outcome: 'conflict', detail: err.message });
    }
  }
  return {
    max_gap: maxGap,
    tracks: tracks.length,
    filled_tracks: results.filter((r) => r.outcome === 'filled').length,
    created: results.reduce((n, r) => n + (r.created ?? 0), 0),
    results,
  };
}

// ---- Track relabel backfill ----

async function backfillPlanOf(db: Db, trackId: string) {
  const objects = await db.annoObject.findMany({
    where: { trackId },
    select: {
      id: true,
      source: true,
      state: true,
      frame: { select: { index: true } },
      class: { select: { name: true, l0: true, l1: true } },
    },
  });
  return planRelabelBackfill(
    objects.map((o) => ({
      objectId: o.id,
      frameIndex: o.frame.index,
      source: o.source,
      state: o.state,
      class: o.class,
    })),
  );
}

/** GET /api/quality/track-relabel-backfill/plan: per track, the class people gave it and the machine objects that would take it. */
export async function planTrackRelabelBackfill(db: Db, scope: TrackScope) {
  const tracks = await tracksInScope(db, scope);
  const items = [];
  for (const trackId of tracks) items.push({ track_id: trackId, ...(await backfillPlanOf(db, trackId)) });
  const relabelling = items.filter((i) => i.action === 'relabel');
  return {
    tracks: tracks.length,
    relabel_tracks: relabelling.length,
    objects_to_move: relabelling.reduce((n, i) => n + i.moves.length, 0),
    items,
  };
}

/**
 * POST /api/quality/track-relabel-backfill: each planned track is relabelled to its target by a
 * track relabel (docs/track-relabel.md) — the caller's bulk relabel review, one batch and one
 * undoable `track-relabel` run per track. A track that changed meanwhile is reported `conflict`.
 */
export async function applyTrackRelabelBackfill(
  db: Db,
  masks: Pick<MaskStore, 'read'>,
  scope: TrackScope,
  reviewer: string,
  actor: Actor,
) {
  const tracks = await tracksInScope(db, scope);
  const results = [];
  for (const trackId of tracks) {
    const plan = await backfillPlanOf(db, trackId);
    if (plan.action !== 'relabel') continue;
    try {
      const out = await relabelTrack(
        db,
        masks,
        trackId,
        { className: plan.target!, expectedVersions: null, reviewer },
        actor,
      );
      results.push({
        track_id: trackId,
        outcome: 'relabelled',
        class_name: out.class_name,
        batch_id: out.batch_id,
        run_id: out.run_id,
        relabelled: out.relabelled.length,
      });
    } catch (err) {
      if (!(err instanceof ConflictError || err instanceof RefusedError)) throw err;
      results.push({ track_id: trackId, outcome: 'conflict', detail: err.message });
    }
  }
  return {
    tracks: tracks.length,
    relabelled_tracks: results.filter((r) => r.outcome === 'relabelled').length,
    objects_relabelled: results.reduce((n, r) => n + (r.relabelled ?? 0), 0),
    results,
  };
}

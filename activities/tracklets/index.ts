import { isDeepStrictEqual } from 'node:util';
import { InputError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { deriveAttributes, type DerivedAttributes } from '../../core/tracklets/derive';
import {
  suggestKeyframes,
  KEYFRAME_RULES_VERSION,
  type KeyframeThresholds,
} from '../../core/tracklets/keyframes';
import type { TrackletPoint } from '../../core/tracklets/points';
import {
  summariseTracklet,
  trackletStats,
  type TrackletObject,
  type TrackRow,
} from '../../core/tracklets/summary';
import { isKeyframe, KEYFRAME_ATTR } from '../../core/tracking/interpolate';
import type { Prisma, Track } from '../../generated/prisma/client';
import type { MaskStore } from '../annotations/masks';
import type { Actor } from '../annotations/objects';
import { reviewObjects } from '../annotations/review';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { asJsonObject, findTrack, lockTrack } from '../tracks/events';
import { trackOut } from '../tracks/retrack';
import { reviewEffect } from '../../core/review/actions';

type Tx = Db | Prisma.TransactionClient;

/** The objects linked to the track now (not its stored trajectory, which does not follow later edits). */
async function trackletObjects(db: Tx, trackId: string) {
  const rows = await db.annoObject.findMany({
    where: { trackId },
    orderBy: { id: 'asc' },
    select: {
      id: true,
      bbox: true,
      attrs: true,
      state: true,
      source: true,
      conf: true,
      version: true,
      class: { select: { name: true } },
      frame: { select: { id: true, index: true, timestampMs: true, width: true, height: true } },
    },
  });
  return rows.map((o) => ({
    row: o,
    object: {
      frame_id: o.frame.id,
      frame_index: o.frame.index,
      ts_ms: o.frame.timestampMs,
      object_id: o.id,
      class_name: o.class.name,
      state: o.state,
      attrs: asJsonObject(o.attrs),
      source: o.source,
      conf: o.conf,
      keyframe: isKeyframe(o.attrs),
    } satisfies TrackletObject,
  }));
}

/** The boxes the motion rules read: rejected objects are no object of the scene, and a shape without a box has no centre. */
const motionPoints = (objects: Awaited<ReturnType<typeof trackletObjects>>) =>
  objects.flatMap(({ row, object }) =>
    row.state !== 'rejected' && row.bbox.length === 4
      ? [{ ...object, box: row.bbox as Box, width: row.frame.width, height: row.frame.height }]
      : [],
  );

/** The track fields every tracklet answer starts with (its stored trajectory is the tracks group's to show). */
function trackFields(t: Track) {
  const {
    trajectory: _trajectory,
    length: trajectory_points,
    first_frame_index: _first,
    last_frame_index: _last,
    attrs,
    ...track
  } = trackOut(t);
  const a = asJsonObject(attrs as Prisma.JsonValue);
  return { ...track, trajectory_points, intent: a.intent ?? null, derived: a.derived ?? null };
}

/** GET /api/tracklets/{track_id}: what the track holds (docs/tracklets.md). */
export async function trackletSummary(db: Tx, trackId: string) {
  const track = await findTrack(db, trackId);
  const objects = await trackletObjects(db, trackId);
  const summary = summariseTracklet(objects.map((o) => o.object));
  const majority = Object.entries(summary.classes).sort(([, a], [, b]) => b - a)[0]?.[0] ?? null;
  const fields = trackFields(track);
  return { ...fields, class_name: fields.class_name ?? majority, ...summary };
}

/** GET /api/tracklets/stats/summary: corpus statistics of tracks, or of one session's. */
export async function trackletCorpusStats(db: Db, sessionId: string | null) {
  const rows = await db.$queryRaw<TrackRow[]>`
    SELECT t.attrs->>'class_name' AS class_name, t.tracker_version,
           count(o.id)::int AS objects,
           (count(o.id) FILTER (WHERE o.attrs->(${KEYFRAME_ATTR}::text) = 'true'::jsonb))::int AS keyframes
      FROM tracks t LEFT JOIN objects o ON o.track_id = t.id
     WHERE ${sessionId}::uuid IS NULL OR t.session_id = ${sessionId}::uuid
     GROUP BY t.id`;
  return { session_id: sessionId, ...trackletStats(rows) };
}

/** GET /api/tracklets/{track_id}/suggest-keyframes: suggestions beside the keyframes already marked. */
export async function suggestTrackKeyframes(db: Db, trackId: string, thresholds: KeyframeThresholds) {
  await findTrack(db, trackId);
  const objects = await trackletObjects(db, trackId);
  const points: TrackletPoint[] = motionPoints(objects);
  const { keyframes, scale_px } = suggestKeyframes(points, thresholds);
  const marked = new Set(objects.filter((o) => o.object.keyframe).map((o) => o.object.object_id));
  const suggested = new Set(keyframes.map((k) => k.object_id));
  return {
    track_id: trackId,
    rules_version: KEYFRAME_RULES_VERSION,
    thresholds,
    points: points.length,
    scale_px,
    keyframes: keyframes.map((k) => ({ ...k, marked: marked.has(k.object_id) })),
    marked_not_suggested: [...marked].filter((id) => !suggested.has(id)).sort(),
  };
}

/**
 * POST /api/tracklets/{track_id}/derive: derived attributes from the track's boxes, stored in
 * `Track.attrs.derived` (the other attrs kept; the track's row locked) unless `dry_run`.
 */
export async function deriveTrack(db: Db, trackId: string, opts: { dryRun: boolean }, actor: Actor) {
  const derive = async (tx: Tx) => {
    const track = await findTrack(tx, trackId);
    const points = motionPoints(await trackletObjects(tx, trackId));
    const indexes = points.map((p) => p.frame_index);
    const inSpan = points.length
      ? await tx.frame.count({
          where: {
            sessionId: track.sessionId,
            index: { gte: Math.min(...indexes), lte: Math.max(...indexes) },
          },
        })
      : 0;
    return { track, derived: deriveAttributes(points, inSpan) };
  };
  if (opts.dryRun) {
    const { derived } = await derive(db);
    return { track_id: trackId, dry_run: true, stored: false, derived };
  }
  return db.$transaction(async (tx) => {
    const locked = await lockTrack(tx, trackId, 'update');
    const { derived } = await derive(tx);
    const stored: DerivedAttributes & { derived_at: string; derived_by: string } = {
      ...derived,
      derived_at: new Date().toISOString(),
      derived_by: actor.userId,
    };
    await tx.track.update({
      where: { id: trackId },
      data: { attrs: { ...asJsonObject(locked.attrs), derived: stored } as unknown as Prisma.InputJsonValue },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'track.derived',
      subjectType: 'track',
      subjectId: trackId,
      detail: {
        previous: asJsonObject(locked.attrs).derived ?? null,
        derived: stored,
      } as unknown as Prisma.InputJsonValue,
      requestId: actor.requestId,
    });
    return { track_id: trackId, dry_run: false, stored: true, derived: stored };
  });
}

export interface TrackAttributesInput {
  attrs: Record<string, unknown>;
  fromFrameId: string | null;
  toFrameId: string | null;
  reviewer: string;
}

/** A frame named as one end of the range: a frame of the track's session, else a 422 (another session's frame is not revealed). */
async function rangeEnd(
  db: Db,
  sessionId: string,
  frameId: string | null,
  field: string,
): Promise<number | null> {
  if (frameId === null) return null;
  const f = await db.frame.findUnique({ where: { id: frameId }, select: { sessionId: true, index: true } });
  if (!f || f.sessionId !== sessionId)
    throw new InputError(`frame ${frameId} is not a frame of the track's session`, [
      { field, message: 'not a frame of the track’s session' },
    ]);
  return f.index;
}

/**
 * POST /api/tracklets/{track_id}/attributes: sets attributes on the track's objects over a frame
 * range as one bulk `edit` review of the caller (reviewObjects: one transaction, versions checked
 * against those read here, the prior attrs in each review's `before`, source human). Objects that
 * already hold every value are left unwritten, as are rejected ones.
 */
export async function setTrackAttributes(
  db: Db,
  masks: Pick<MaskStore, 'read'>,
  trackId: string,
  input: TrackAttributesInput,
  actor: Actor,
) {
  if (Object.hasOwn(input.attrs, KEYFRAME_ATTR))
    throw new InputError(`${KEYFRAME_ATTR} is reserved: mark keyframes with the keyframe route`, [
      { field: `body.attrs.${KEYFRAME_ATTR}`, message: 'reserved' },
    ]);
  const track = await findTrack(db, trackId);
  const from = await rangeEnd(db, track.sessionId, input.fromFrameId, 'body.from_frame_id');
  const to = await rangeEnd(db, track.sessionId, input.toFrameId, 'body.to_frame_id');
  if (from !== null && to !== null && from > to)
    throw new InputError('from_frame_id comes after to_frame_id', [
      { field: 'body.to_frame_id', message: 'before from_frame_id' },
    ]);
  const inRange = (await trackletObjects(db, trackId))
    .filter(
      ({ object: o }) => (from === null || o.frame_index >= from) && (to === null || o.frame_index <= to),
    )
    .sort((a, b) => a.object.frame_index - b.object.frame_index);
  const holds = (attrs: Record<string, unknown>) =>
    Object.entries(input.attrs).every(([k, v]) => Object.hasOwn(attrs, k) && isDeepStrictEqual(attrs[k], v));
  const left = inRange.flatMap(({ object: o }) =>
    o.state === 'rejected' || holds(o.attrs)
      ? [
          {
            object_id: o.object_id,
            frame_index: o.frame_index,
            reason: o.state === 'rejected' ? 'rejected' : 'unchanged',
          },
        ]
      : [],
  );
  const writing = inRange.filter(({ object: o }) => o.state !== 'rejected' && !holds(o.attrs));
  const base = {
    track_id: trackId,
    attrs: input.attrs,
    from_frame_index: from ?? inRange[0]?.object.frame_index ?? null,
    to_frame_index: to ?? inRange.at(-1)?.object.frame_index ?? null,
    left,
  };
  if (!inRange.length) throw new RefusedError(`track ${trackId} has no object in the frame range`);
  if (!writing.length) return { ...base, batch_id: null, updated: [] };
  const reviewed = await reviewObjects(
    db,
    masks,
    {
      objectIds: writing.map((o) => o.object.object_id),
      action: 'edit',
      effect: reviewEffect({ action: 'edit', state: null, className: null, attrs: input.attrs }),
      expectedVersions: Object.fromEntries(writing.map((o) => [o.row.id, o.row.version])),
      reviewer: input.reviewer,
      timeSpentMs: 0,
      bulk: true,
      alsoWrite: (tx, written) =>
        recordAudit(tx, {
          actorId: actor.userId,
          action: 'track.attributes_set',
          subjectType: 'track',
          subjectId: trackId,
          detail: {
            batch_id: written.batchId,
            attrs: input.attrs,
            from_frame_index: base.from_frame_index,
            to_frame_index: base.to_frame_index,
            updated: written.objects.length,
          } as Prisma.InputJsonValue,
          requestId: actor.requestId,
        }),
    },
    actor,
  );
  const frameOf = new Map(writing.map((o) => [o.object.object_id, o.object.frame_index]));
  return {
    ...base,
    batch_id: reviewed.batchId,
    updated: reviewed.objects
      .map((o) => ({
        object_id: o.id,
        frame_index: frameOf.get(o.id)!,
        version: o.version,
        state: o.state,
        source: o.source,
      }))
      .sort((a, b) => a.frame_index - b.frame_index),
  };
}

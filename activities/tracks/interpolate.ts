import { randomUUID } from 'node:crypto';
import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { MACHINE_SOURCE_SPELLINGS, normaliseSource } from '../../core/objects/sources';
import {
  anchorRefusal,
  consecutiveSpans,
  fillAnchors,
  isKeyframe,
  KEYFRAME_ATTR,
  keyframeAnchors,
  planInterpolation,
  spanBetween,
  spansAround,
  type FramePlan,
  type SessionFrameRef,
  type Span,
  type TrackObject,
} from '../../core/tracking/interpolate';
import { findTrackGaps } from '../../core/tracking/gaps';
import type { StoredTrajectoryPoint as TrajectoryPoint } from '../../core/tracking/session';
import { Prisma } from '../../generated/prisma/client';
import { objectOut, type Actor, type Tx } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

/** Interpolation's own spellings of `source`: the ones it may overwrite (legacy `interp` included). */
const INTERPOLATED_SPELLINGS = MACHINE_SOURCE_SPELLINGS.filter((s) => normaliseSource(s) === 'interpolated');

/** The state a machine fill takes: like recall candidates and relabels, it waits for a person. */
const FILL_STATE = 'review';

/** Which spans a request fills (docs/track-interpolation.md). */
export type InterpolationRequest =
  | { mode: 'gaps' }
  | { mode: 'between'; fromObjectId: string; toObjectId: string }
  | { mode: 'keyframed' }
  | { mode: 'around'; keyframeObjectId: string }
  /** The gaps of at most `maxGap` missing frames (docs/quality.md "Track gap fill"). */
  | { mode: 'gap-fill'; maxGap: number };

export interface TrackView {
  track: { id: string; sessionId: string; trajectory: Prisma.JsonValue };
  frames: SessionFrameRef[];
  objects: TrackObject[];
  /** What the writer needs beyond the plan: each object's class id and version. */
  rows: Map<string, { classId: number; version: number }>;
}

/**
 * The track, its session's frames and its objects, read after locking the track row: two
 * interpolations of one track queue, so neither plans a frame the other is filling.
 */
async function lockTrack(tx: Tx, trackId: string): Promise<TrackView> {
  const locked = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id::text FROM tracks WHERE id = ${trackId}::uuid FOR UPDATE`;
  if (!locked.length) throw new NotFoundError(`no track ${trackId}`);
  return readTrackView(tx, trackId);
}

/** The track as interpolation plans it, without a lock (a plan that writes nothing needs none). */
export async function readTrackView(tx: Tx, trackId: string): Promise<TrackView> {
  const track = await tx.track.findUniqueOrThrow({
    where: { id: trackId },
    select: { id: true, sessionId: true, trajectory: true },
  });
  const frames = await tx.frame.findMany({
    where: { sessionId: track.sessionId },
    orderBy: { index: 'asc' },
    select: { id: true, index: true, timestampMs: true },
  });
  const objects = await tx.annoObject.findMany({
    where: { trackId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    include: { class: { select: { name: true } }, frame: { select: { index: true, timestampMs: true } } },
  });
  return {
    track,
    frames: frames.map((f) => ({ frameId: f.id, index: f.index, tsMs: f.timestampMs })),
    objects: objects.map((o) => ({
      objectId: o.id,
      frameId: o.frameId,
      frameIndex: o.frame.index,
      tsMs: o.frame.timestampMs,
      className: o.class.name,
      source: o.source,
      state: o.state,
      keyframe: isKeyframe(o.attrs),
      bbox: o.bbox as Box,
      polyline: Array.isArray(o.polyline) ? (o.polyline as number[][]) : null,
    })),
    rows: new Map(objects.map((o) => [o.id, { classId: o.classId, version: o.version }])),
  };
}

function trackObject(view: TrackView, objectId: string, role: string): TrackObject {
  const o = view.objects.find((x) => x.objectId === objectId);
  if (!o) throw new RefusedError(`object ${objectId} (${role}) is not an object of track ${view.track.id}`);
  return o;
}

/** A named anchor must be one a person or a detector put there and nobody rejected. */
function namedAnchor(view: TrackView, objectId: string, role: string): TrackObject {
  const o = trackObject(view, objectId, role);
  const refusal = anchorRefusal(o);
  if (refusal) throw new RefusedError(`object ${objectId} (${role}) ${refusal}`);
  return o;
}

function spansOf(view: TrackView, request: InterpolationRequest): Span[] {
  switch (request.mode) {
    case 'gaps':
      return consecutiveSpans(fillAnchors(view.objects));
    case 'between':
      return [
        spanBetween(
          namedAnchor(view, request.fromObjectId, 'from_object_id'),
          namedAnchor(view, request.toObjectId, 'to_object_id'),
        ),
      ];
    case 'keyframed':
      return consecutiveSpans(keyframeAnchors(view.objects));
    case 'around':
      return spansAround(trackObject(view, request.keyframeObjectId, 'object_id'), view.objects);
    case 'gap-fill':
      return findTrackGaps(view.frames, view.objects, request.maxGap)
        .filter((g) => g.action === 'fill')
        .map((g) => g.span);
  }
}

const NO_SPAN: Record<InterpolationRequest['mode'], string> = {
  gaps: 'has fewer than two objects on different frames to interpolate between',
  between: 'has nothing between the two objects',
  keyframed: 'has fewer than two keyframes on different frames',
  around: 'has no other keyframe on either side of this one',
  'gap-fill': 'has no gap that interpolation may fill',
};

const polylineJson = (p: number[][] | null) => (p === null ? Prisma.DbNull : (p as Prisma.InputJsonValue));

/** The provenance every fill carries: which anchors and where between them, so a reviewer sees why the box is there. */
const fillProvenance = (
  p: Extract<FramePlan, { action: 'create' | 'update' }>,
  objectId: string,
  mode: string,
) => ({
  objectId,
  paths: ['interpolated'],
  reasonerTrace: {
    method: 'linear_by_timestamp',
    mode,
    from_object_id: p.fromObjectId,
    to_object_id: p.toObjectId,
    t: p.t,
  },
});

/**
 * The track's trajectory with the fills in it: the tracker's points stay, a filled frame's point
 * names its object and box, so the track reads back with the boxes its objects have.
 */
function trajectoryWith(
  view: TrackView,
  written: ReadonlyArray<{ objectId: string; frameId: string; frameIndex: number; bbox: Box }>,
): TrajectoryPoint[] {
  const ts = new Map(view.frames.map((f) => [f.frameId, f.tsMs]));
  const ids = new Set(written.map((w) => w.objectId));
  const kept = (view.track.trajectory as unknown as TrajectoryPoint[]).filter((p) => !ids.has(p.object_id));
  const filled = written.map((w) => ({
    frame_id: w.frameId,
    frame_index: w.frameIndex,
    ts_ms: ts.get(w.frameId)!,
    object_id: w.objectId,
    box: w.bbox,
    // A fill has no detector score; like a person's box (conf null), the trajectory counts it as sure.
    score: 1,
  }));
  return [...kept, ...filled].sort((a, b) => a.frame_index - b.frame_index);
}

export interface InterpolationOutcome {
  track_id: string;
  mode: InterpolationRequest['mode'];
  spans: Array<{ from_object_id: string; to_object_id: string }>;
  created: number;
  updated: number;
  left: number;
  frames: Array<{
    frame_id: string;
    frame_index: number;
    action: FramePlan['action'];
    object_id: string;
    reason?: string;
    t?: number;
  }>;
  objects: Array<ReturnType<typeof objectOut>>;
}

/**
 * Fills a track's frames between anchors (docs/track-interpolation.md) in one transaction: fills are
 * created or recomputed with source `interpolated`, state `review`, the anchors' class, a
 * provenance row each and (for a recomputed one) the next version; the track's trajectory takes
 * them in; one audit entry counts them. A refusal (classes differ, unmatched polygons, nothing to
 * fill) is thrown before anything is written, so the transaction leaves nothing behind.
 */
export async function interpolateTrack(
  db: Db,
  trackId: string,
  request: InterpolationRequest,
  actor: Actor,
): Promise<InterpolationOutcome> {
  return db.$transaction(
    async (tx) => {
      const view = await lockTrack(tx, trackId);
      if (request.mode === 'around') {
        const anchor = trackObject(view, request.keyframeObjectId, 'object_id');
        if (!anchor.keyframe)
          throw new RefusedError(`object ${anchor.objectId} is not a keyframe; mark it one first`);
      }
      const spans = spansOf(view, request);
      if (!spans.length) throw new RefusedError(`track ${trackId} ${NO_SPAN[request.mode]}`);
      const plans = planInterpolation(view.frames, view.objects, spans);
      const classOf = (objectId: string) => view.rows.get(objectId)!.classId;

      const creates = plans.flatMap((p) => (p.action === 'create' ? [{ plan: p, id: randomUUID() }] : []));
      await tx.annoObject.createMany({
        data: creates.map(({ plan, id }) => ({
          id,
          frameId: plan.frameId,
          bbox: plan.shape.bbox,
          polyline: polylineJson(plan.shape.polyline),
          classId: classOf(plan.fromObjectId),
          conf: null,
          source: 'interpolated',
          state: FILL_STATE,
          trackId,
        })),
      });
      const updates = plans.flatMap((p) => (p.action === 'update' ? [p] : []));
      for (const plan of updates) {
        const res = await tx.annoObject.updateMany({
          // Track edits lock the track, but a review does not: one that made the fill human meanwhile wins.
          where: {
            id: plan.objectId,
            version: view.rows.get(plan.objectId)!.version,
            source: { in: INTERPOLATED_SPELLINGS },
          },
          data: {
            bbox: plan.shape.bbox,
            polyline: polylineJson(plan.shape.polyline),
            classId: classOf(plan.fromObjectId),
            source: 'interpolated',
            state: FILL_STATE,
            version: { increment: 1 },
          },
        });
        if (res.count === 0)
          throw new ConflictError(
            `object ${plan.objectId} changed while the track was interpolated; nothing was written`,
            {
              conflicts: [{ object_id: plan.objectId }],
            },
          );
      }
      await tx.provenance.createMany({
        data: [
          ...creates.map(({ plan, id }) => fillProvenance(plan, id, request.mode)),
          ...updates.map((plan) => fillProvenance(plan, plan.objectId, request.mode)),
        ],
      });
      const written = [
        ...creates.map(({ plan, id }) => ({
          objectId: id,
          frameId: plan.frameId,
          frameIndex: plan.frameIndex,
          bbox: plan.shape.bbox,
        })),
        ...updates.map((p) => ({
          objectId: p.objectId,
          frameId: p.frameId,
          frameIndex: p.frameIndex,
          bbox: p.shape.bbox,
        })),
      ];
      if (written.length)
        await tx.track.update({
          where: { id: trackId },
          data: { trajectory: trajectoryWith(view, written) as unknown as Prisma.InputJsonValue },
        });
      const counts = {
        created: creates.length,
        updated: updates.length,
        left: plans.length - creates.length - updates.length,
      };
      const spanIds = spans.map((s) => ({ from_object_id: s.from.objectId, to_object_id: s.to.objectId }));
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'track.interpolated',
        subjectType: 'track',
        subjectId: trackId,
        detail: { mode: request.mode, spans: spanIds, ...counts },
        requestId: actor.requestId,
      });
      const objects = await tx.annoObject.findMany({
        where: { id: { in: written.map((w) => w.objectId) } },
        include: { class: { select: { name: true } } },
      });
      const idOf = (p: FramePlan) =>
        p.action === 'create' ? creates.find((c) => c.plan === p)!.id : p.objectId;
      return {
        track_id: trackId,
        mode: request.mode,
        spans: spanIds,
        ...counts,
        frames: plans.map((p) => ({
          frame_id: p.frameId,
          frame_index: p.frameIndex,
          action: p.action,
          object_id: idOf(p),
          ...(p.action === 'left' ? { reason: p.reason } : { t: p.t }),
        })),
        objects: objects.map(objectOut),
      };
    },
    { timeout: 30_000 },
  );
}

/** The track a keyframe object belongs to; an object outside any track has no keyframes to interpolate between. */
export async function trackOfObject(db: Tx, objectId: string): Promise<string> {
  const o = await db.annoObject.findUnique({ where: { id: objectId }, select: { trackId: true } });
  if (!o) throw new NotFoundError(`no object ${objectId}`);
  if (!o.trackId) throw new RefusedError(`object ${objectId} belongs to no track`);
  return o.trackId;
}

/**
 * Marks or unmarks an object of a track as a keyframe (attrs.keyframe). The flag is content the
 * caller can see and later versions depend on, so a change bumps `version` (optionally checked
 * against `expected_version`); source and state stay, since no geometry or label changed and an
 * unmarked fill goes back to being interpolation's to recompute. Marking what is already marked
 * changes nothing.
 */
export async function setKeyframe(
  db: Db,
  objectId: string,
  input: { keyframe: boolean; expectedVersion: number | null },
  actor: Actor,
) {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id::text FROM objects WHERE id = ${objectId}::uuid FOR UPDATE`;
    if (!rows.length) throw new NotFoundError(`no object ${objectId}`);
    const current = await tx.annoObject.findUniqueOrThrow({ where: { id: objectId } });
    if (!current.trackId)
      throw new RefusedError(
        `object ${objectId} belongs to no track; only an object of a track can be a keyframe`,
      );
    if (input.expectedVersion !== null && input.expectedVersion !== current.version)
      throw new ConflictError(
        `object ${objectId} is at version ${current.version}, not ${input.expectedVersion}`,
        {
          conflicts: [{ object_id: objectId, expected: input.expectedVersion, actual: current.version }],
        },
      );
    const changed = isKeyframe(current.attrs) !== input.keyframe;
    if (changed) {
      const { [KEYFRAME_ATTR]: _previous, ...rest } = current.attrs as Record<string, unknown>;
      await tx.annoObject.update({
        where: { id: objectId },
        data: {
          attrs: (input.keyframe ? { ...rest, [KEYFRAME_ATTR]: true } : rest) as Prisma.InputJsonValue,
          version: { increment: 1 },
        },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: input.keyframe ? 'object.keyframe.marked' : 'object.keyframe.unmarked',
        subjectType: 'object',
        subjectId: objectId,
        detail: { track_id: current.trackId, version: current.version + 1 },
        requestId: actor.requestId,
      });
    }
    const after = await tx.annoObject.findUniqueOrThrow({
      where: { id: objectId },
      include: { class: { select: { name: true } } },
    });
    return {
      object_id: objectId,
      track_id: current.trackId,
      keyframe: input.keyframe,
      changed,
      object: objectOut(after),
    };
  });
}

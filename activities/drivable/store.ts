import { signedArea2, type Candidate, type DrivableShapes, type Point } from '../../core/drivable';
import { ConflictError, NotFoundError } from '../../core/errors';
import type { DrivableArea, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { loadFrameImage } from '../annotations/crops';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { decodeFrame } from '../detect/frame-image';
import type { ObjectStore } from '../storage/object-store';
import type { RoadSegmenter } from './model';

/** A frame's drivable area as the routes answer it. */
export function drivableOut(a: DrivableArea) {
  return {
    frame_id: a.frameId,
    polygons: a.polygons as number[][],
    holes: a.holes as number[][],
    candidates: a.candidates as unknown as Candidate[],
    source: a.source as 'model' | 'human',
    model_version: a.modelVersion,
    stats: a.stats,
    version: a.version,
    run_id: a.runId,
    updated_by: a.updatedBy,
    created_at: a.createdAt.toISOString(),
    updated_at: a.updatedAt.toISOString(),
  };
}

export async function frameOrThrow(db: Db, frameId: string) {
  const frame = await db.frame.findUnique({ where: { id: frameId } });
  if (!frame) throw new NotFoundError(`no frame ${frameId}`);
  return frame;
}

export async function getDrivable(db: Db, frameId: string) {
  await frameOrThrow(db, frameId);
  const area = await db.drivableArea.findUnique({ where: { frameId } });
  if (!area) throw new NotFoundError(`frame ${frameId} has no drivable area`);
  return drivableOut(area);
}

/** Drawn polygons: outer rings and holes, flat [x, y, ...] in frame pixels. */
export interface DrawnArea {
  polygons: number[][];
  holes: number[][];
  candidates?: Candidate[];
}

const ringOf = (flat: number[]): Point[] => {
  const out: Point[] = [];
  for (let i = 0; i + 1 < flat.length; i += 2) out.push([flat[i]!, flat[i + 1]!]);
  return out;
};

/** The share of the frame a drawn area covers: its rings' area less its holes'. */
export function drawnRoadFraction(area: DrawnArea, frame: { width: number; height: number }): number {
  const sum = (rings: number[][]) => rings.reduce((s, r) => s + Math.abs(signedArea2(ringOf(r))) / 2, 0);
  return Math.max(0, Math.min(1, (sum(area.polygons) - sum(area.holes)) / (frame.width * frame.height)));
}

const json = (v: unknown) => v as Prisma.InputJsonValue;

/** What a model pass writes into a row (fresh or replacing a model-made one). */
export const modelRow = (shapes: DrivableShapes, modelVersion: string) => ({
  polygons: json(shapes.polygons),
  holes: json(shapes.holes),
  candidates: json(shapes.candidates),
  source: 'model',
  modelVersion,
  stats: json(shapes.stats),
});

/** Runs the road model on one stored frame. */
export async function segmentStoredFrame(
  storage: ObjectStore,
  segmenter: RoadSegmenter,
  frame: { id: string; uri: string; redactedUri: string | null; width: number; height: number },
) {
  return segmenter.segment(await decodeFrame(await loadFrameImage(storage, frame)));
}

const humanRefusal = (frameId: string) =>
  new ConflictError(
    `frame ${frameId} has a human-drawn drivable area; the model never overwrites one (edit it with PUT)`,
  );

/**
 * POST /api/frames/{frame_id}/drivable without polygons: the model runs on the frame now and its
 * area replaces a model-made one (version + 1); a human-drawn one is never replaced (409).
 */
export async function segmentFrameNow(
  db: Db,
  storage: ObjectStore,
  segmenter: RoadSegmenter,
  frameId: string,
  actor: Actor,
) {
  const frame = await frameOrThrow(db, frameId);
  const existing = await db.drivableArea.findUnique({ where: { frameId } });
  if (existing?.source === 'human') throw humanRefusal(frameId);
  const { shapes, modelVersion } = await segmentStoredFrame(storage, segmenter, frame);
  const row = { ...modelRow(shapes, modelVersion), runId: null, updatedBy: actor.userId };
  const written = existing
    ? await db.drivableArea.updateMany({
        where: { frameId, version: existing.version, source: 'model' },
        data: { ...row, version: { increment: 1 } },
      })
    : await db.drivableArea.createMany({ data: [{ frameId, ...row }], skipDuplicates: true });
  if (written.count === 0)
    throw new ConflictError(`the drivable area of frame ${frameId} changed while the model ran; try again`);
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'drivable.segmented',
    subjectType: 'frame',
    subjectId: frameId,
    detail: { model_version: modelVersion, road_fraction: shapes.stats.road_fraction },
    requestId: actor.requestId,
  });
  return getDrivable(db, frameId);
}

/** POST with polygons: a reviewer's area for a frame that has none (an existing one is edited with PUT). */
export async function drawFrameArea(db: Db, frameId: string, area: DrawnArea, actor: Actor) {
  const frame = await frameOrThrow(db, frameId);
  const written = await db.drivableArea.createMany({
    data: [
      {
        frameId,
        polygons: json(area.polygons),
        holes: json(area.holes),
        candidates: json(area.candidates ?? []),
        source: 'human',
        stats: json({ road_fraction: drawnRoadFraction(area, frame) }),
        updatedBy: actor.userId,
      },
    ],
    skipDuplicates: true,
  });
  if (written.count === 0)
    throw new ConflictError(
      `frame ${frameId} already has a drivable area; edit it with PUT and expected_version`,
    );
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'drivable.drawn',
    subjectType: 'frame',
    subjectId: frameId,
    detail: { polygons: area.polygons.length, holes: area.holes.length },
    requestId: actor.requestId,
  });
  return getDrivable(db, frameId);
}

/**
 * PUT: a reviewer's edit. The area becomes `human` (so no backfill replaces it and a revert keeps
 * it); `expected_version` must match the stored one (409 otherwise). Candidates are kept unless given.
 */
export async function editFrameArea(
  db: Db,
  frameId: string,
  edit: DrawnArea & { expectedVersion: number },
  actor: Actor,
) {
  const frame = await frameOrThrow(db, frameId);
  const existing = await db.drivableArea.findUnique({ where: { frameId } });
  if (!existing) throw new NotFoundError(`frame ${frameId} has no drivable area (POST makes one)`);
  const stats = { ...(existing.stats as object), road_fraction: drawnRoadFraction(edit, frame) };
  const written = await db.drivableArea.updateMany({
    where: { frameId, version: edit.expectedVersion },
    data: {
      polygons: json(edit.polygons),
      holes: json(edit.holes),
      ...(edit.candidates ? { candidates: json(edit.candidates) } : {}),
      source: 'human',
      stats: json(stats),
      version: { increment: 1 },
      updatedBy: actor.userId,
    },
  });
  if (written.count === 0)
    throw new ConflictError(
      `the drivable area of frame ${frameId} is at version ${existing.version}, not ${edit.expectedVersion}: reload it and edit again`,
    );
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'drivable.edited',
    subjectType: 'frame',
    subjectId: frameId,
    detail: { from_version: edit.expectedVersion, from_source: existing.source },
    requestId: actor.requestId,
  });
  return getDrivable(db, frameId);
}

/** Coverage per session: frames, frames with an area by source, and the mean road fraction of those areas. */
export async function drivableCoverage(db: Db, sessionIds: string[] | undefined) {
  const rows = await db.$queryRaw<
    Array<{ sessionId: string; frames: number; model: number; human: number; meanRoad: number | null }>
  >`
    SELECT f.session_id::text AS "sessionId", count(*)::int AS frames,
      count(*) FILTER (WHERE d.source = 'model')::int AS model,
      count(*) FILTER (WHERE d.source = 'human')::int AS human,
      avg((d.stats->>'road_fraction')::float8) AS "meanRoad"
    FROM frames f LEFT JOIN drivable_areas d ON d.frame_id = f.id
    WHERE ${sessionIds ?? null}::uuid[] IS NULL OR f.session_id = ANY(${sessionIds ?? null}::uuid[])
    GROUP BY f.session_id ORDER BY f.session_id`;
  return {
    sessions: rows.map((r) => ({
      session_id: r.sessionId,
      frames: r.frames,
      with_area: r.model + r.human,
      by_source: { model: r.model, human: r.human },
      coverage: r.frames === 0 ? 0 : (r.model + r.human) / r.frames,
      mean_road_fraction: r.meanRoad,
    })),
  };
}

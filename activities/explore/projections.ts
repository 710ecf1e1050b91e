import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { SlicePredicate } from '../../core/curation/slice';
import type { EmbeddingModelName } from '../../core/curation/embedding';
import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import {
  evenSample,
  projectPca,
  projectUmap,
  PROJECTION_MIN_FRAMES,
  type Point2,
  type ProjectionMethod,
} from '../../core/explore/projection';
import { selectPoints, type Shape } from '../../core/explore/select';
import { Prisma, type ExploreProjection } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import { sliceQuery } from '../curation/slice-query';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import { inOrder, newestFirst, type Page } from './paging';

/**
 * Projections of frame embeddings (docs/quality-explore.md): the API checks the scope and creates
 * the projection; workflow `explore-projection-<id>` lays the frames out (core/explore/projection.ts)
 * and writes one point per frame; select reads the points back through a shape.
 */

export interface ProjectionParams {
  model: EmbeddingModelName;
  session_ids: string[] | null;
  slice_id: string | null;
  /** The slice's predicate when the projection was asked for (a slice is never edited, but may go). */
  predicate: SlicePredicate | null;
  max_frames: number;
  seed: number;
  n_neighbors: number;
  min_dist: number;
}

export interface ProjectionOutcome {
  frames_in_scope: number;
  frames_without_embedding: number;
  frames_projected: number;
  sampled: boolean;
  explained_variance?: [number, number];
}

type Scope = Pick<ProjectionParams, 'model' | 'session_ids' | 'predicate'>;

export const exploreProjectionWorkflowId = (id: string) => `explore-projection-${id}`;

/** The frames in scope, as a condition over `fr` (the slice's own aliases stay inside its subquery). */
function scopeSql(scope: Scope) {
  const q = sliceQuery(scope.predicate ?? {});
  const where = (param: (value: unknown) => string) =>
    [
      scope.predicate ? `fr.id IN (SELECT o.frame_id FROM ${q.from} WHERE ${q.where})` : 'TRUE',
      scope.session_ids ? `fr.session_id = ANY(${param(scope.session_ids)}::uuid[])` : 'TRUE',
    ].join(' AND ');
  return { q, where };
}

/** Frames in scope, and how many of them have an embedding of the model. */
export async function projectionScopeCounts(db: Db, scope: Scope) {
  const { q, where } = scopeSql(scope);
  const [row] = await q.rows<{ frames: bigint; embedded: bigint }>(db, (param) => {
    const model = param(scope.model);
    return `SELECT count(*) AS frames, count(e.frame_id) AS embedded
              FROM frames fr LEFT JOIN frame_embeddings e ON e.frame_id = fr.id AND e.model = ${model}
             WHERE ${where(param)}`;
  });
  return { frames: Number(row!.frames), embedded: Number(row!.embedded) };
}

/** The embedded frames in scope, by session, frame index and id. */
async function embeddedFrameIds(db: Db, scope: Scope): Promise<string[]> {
  const { q, where } = scopeSql(scope);
  const rows = await q.rows<{ id: string }>(db, (param) => {
    const model = param(scope.model);
    return `SELECT fr.id::text FROM frames fr JOIN frame_embeddings e ON e.frame_id = fr.id AND e.model = ${model}
             WHERE ${where(param)} ORDER BY fr.session_id, fr.index, fr.id`;
  });
  return rows.map((r) => r.id);
}

/**
 * Checks a projection's scope and creates it (status `running`), ready for its workflow: 422 naming
 * the reason when the scope holds no frame, when none of its frames has an embedding of the model
 * yet (POST /api/curation/embed makes them), or when fewer than PROJECTION_MIN_FRAMES have.
 */
export async function createProjection(
  db: Db,
  input: { method: ProjectionMethod } & ProjectionParams,
  actor: Actor,
): Promise<{ projection: ExploreProjection; counts: { frames: number; embedded: number } }> {
  const counts = await projectionScopeCounts(db, input);
  if (!counts.frames) throw new RefusedError('the scope holds no frames', { reason: 'no_frames' });
  if (!counts.embedded)
    throw new RefusedError(
      `none of the ${counts.frames} frames in scope has a ${input.model} embedding yet: embed them first (POST /api/curation/embed)`,
      { reason: 'no_embeddings', frames: counts.frames, model: input.model },
    );
  if (counts.embedded < PROJECTION_MIN_FRAMES)
    throw new RefusedError(
      `only ${counts.embedded} frame(s) in scope have a ${input.model} embedding; a projection needs at least ${PROJECTION_MIN_FRAMES}`,
      { reason: 'too_few_embeddings', embedded: counts.embedded, frames: counts.frames },
    );
  const { method, ...params } = input;
  const projection = await db.exploreProjection.create({
    data: {
      method,
      params: params as unknown as Prisma.InputJsonValue,
      status: 'running',
      createdBy: actor.userId,
    },
  });
  return { projection, counts };
}

export const projectionOut = (p: ExploreProjection) => {
  const { outcome, ...params } = p.params as Record<string, unknown>;
  return {
    id: p.id,
    method: p.method,
    status: p.status,
    params,
    outcome: outcome ?? null,
    n_points: p.nPoints,
    error: p.error,
    workflow_id: exploreProjectionWorkflowId(p.id),
    points_url: `/api/explore/projection/${p.id}/points`,
    created_by: p.createdBy,
    created_at: p.createdAt.toISOString(),
    finished_at: p.finishedAt?.toISOString() ?? null,
  };
};

export async function findProjection(db: Db, id: string): Promise<ExploreProjection> {
  const p = await db.exploreProjection.findUnique({ where: { id } });
  if (!p) throw new NotFoundError(`no projection ${id}`);
  return p;
}

export async function listProjections(db: Db, page: Page) {
  const { ids, next_cursor } = await newestFirst(db, 'projections', page);
  const rows = await db.exploreProjection.findMany({ where: { id: { in: ids } } });
  return { items: inOrder(ids, rows, (p) => p.id).map(projectionOut), limit: page.limit, next_cursor };
}

/** Removes a finished (or failed) projection and its points; one still running is a 409. */
export async function deleteProjection(db: Db, id: string, actor: Actor) {
  const p = await findProjection(db, id);
  if (p.status === 'running')
    throw new ConflictError(
      `projection ${id} is still running (workflow ${exploreProjectionWorkflowId(id)})`,
    );
  await db.$transaction(async (tx) => {
    await tx.exploreProjection.delete({ where: { id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'explore.projection.deleted',
      subjectType: 'explore_projection',
      subjectId: id,
      detail: { method: p.method, n_points: p.nPoints },
      requestId: actor.requestId,
    });
  });
  return { projection_id: id, deleted: true, points: p.nPoints };
}

interface PointRow {
  frame_id: string;
  x: number;
  y: number;
  session_id: string | null;
  index: number | null;
}

/** A projection's points in frame-id order, one page (`cursor`: the last frame id of the previous page). */
export async function projectionPoints(
  db: Db,
  id: string,
  page: { limit: number; cursor?: string | undefined },
) {
  const p = await findProjection(db, id);
  const rows = await db.$queryRaw<PointRow[]>`
    SELECT pp.frame_id::text, pp.x, pp.y, f.session_id::text, f.index
      FROM explore_projection_points pp LEFT JOIN frames f ON f.id = pp.frame_id
     WHERE pp.projection_id = ${p.id}::uuid ${page.cursor ? Prisma.sql`AND pp.frame_id > ${page.cursor}::uuid` : Prisma.empty}
     ORDER BY pp.frame_id LIMIT ${page.limit + 1}`;
  const shown = rows.slice(0, page.limit);
  return {
    projection: projectionOut(p),
    items: shown,
    limit: page.limit,
    next_cursor: rows.length > page.limit ? shown[shown.length - 1]!.frame_id : null,
  };
}

/**
 * The frames whose points lie inside the shape (core/explore/select.ts), in frame-id order, one
 * page at a time, optionally with each frame's objects. The projection must be completed (409).
 */
export async function selectProjectionPoints(
  db: Db,
  input: {
    projection_id: string;
    shape: Shape;
    include_objects: boolean;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const p = await findProjection(db, input.projection_id);
  if (p.status !== 'completed') throw new ConflictError(`projection ${p.id} is ${p.status}, not completed`);
  const points = await db.exploreProjectionPoint.findMany({
    where: { projectionId: p.id },
    select: { frameId: true, x: true, y: true },
    orderBy: { frameId: 'asc' },
  });
  const selected = selectPoints(points, input.shape);
  const from = input.cursor ? selected.findIndex((s) => s.frameId > input.cursor!) : 0;
  const shown = from < 0 ? [] : selected.slice(from, from + input.limit);
  const frames = new Map(
    (
      await db.frame.findMany({
        where: { id: { in: shown.map((s) => s.frameId) } },
        select: { id: true, sessionId: true, index: true },
      })
    ).map((f) => [f.id, f]),
  );
  const objects = new Map<string, unknown[]>();
  if (input.include_objects && shown.length) {
    const rows = await db.annoObject.findMany({
      where: { frameId: { in: shown.map((s) => s.frameId) } },
      include: { class: { select: { name: true } } },
      orderBy: { id: 'asc' },
    });
    for (const o of rows) {
      const list = objects.get(o.frameId) ?? [];
      list.push({
        id: o.id,
        class_id: o.classId,
        class_name: o.class.name,
        bbox: o.bbox,
        state: o.state,
        source: o.source,
        conf: o.conf,
      });
      objects.set(o.frameId, list);
    }
  }
  const last = shown[shown.length - 1];
  return {
    projection_id: p.id,
    total: selected.length,
    items: shown.map((s) => ({
      frame_id: s.frameId,
      x: s.x,
      y: s.y,
      session_id: frames.get(s.frameId)?.sessionId ?? null,
      index: frames.get(s.frameId)?.index ?? null,
      ...(input.include_objects ? { objects: objects.get(s.frameId) ?? [] } : {}),
    })),
    limit: input.limit,
    next_cursor: last && from + input.limit < selected.length ? last.frameId : null,
  };
}

/** Embeddings are read this many frames at a time. */
const READ_PAGE = 500;
/** Points are written this many per statement. */
const WRITE_BATCH = 5000;

/** The projection's activities (cpu queue), run by exploreProjectionWorkflow. */
export function createExploreProjectionActivities({ db }: Pick<ActivityDeps, 'db'>) {
  return {
    /**
     * Lays out the projection's frames and writes their points, replacing any an earlier attempt
     * wrote, in one transaction with the projection's `completed`. Frames in scope are re-read (the
     * embedded ones, by session and index), sampled evenly down to `max_frames`; the layout
     * heartbeats every ten UMAP epochs and yields to the worker's other work between them.
     */
    async projectExploreFrames(input: {
      projectionId: string;
    }): Promise<ProjectionOutcome & { points: number }> {
      const ctx = Context.current();
      const p = await db.exploreProjection.findUnique({ where: { id: input.projectionId } });
      if (!p)
        throw ApplicationFailure.nonRetryable(`no projection ${input.projectionId}`, 'ProjectionNotFound');
      const params = p.params as unknown as ProjectionParams;
      const predicate = params.predicate ? SlicePredicate.parse(params.predicate) : null;
      const scope = { model: params.model, session_ids: params.session_ids, predicate };
      const [counts, ids] = await Promise.all([
        projectionScopeCounts(db, scope),
        embeddedFrameIds(db, scope),
      ]);
      const picked = evenSample(ids.length, params.max_frames).map((i) => ids[i]!);
      if (picked.length < PROJECTION_MIN_FRAMES)
        throw ApplicationFailure.nonRetryable(
          `only ${picked.length} frame(s) in scope have a ${params.model} embedding now; a projection needs at least ${PROJECTION_MIN_FRAMES}`,
          'TooFewEmbeddings',
        );
      const vectors = new Map<string, number[]>();
      for (let i = 0; i < picked.length; i += READ_PAGE) {
        const rows = await db.frameEmbedding.findMany({
          where: { frameId: { in: picked.slice(i, i + READ_PAGE) }, model: params.model },
          select: { frameId: true, vector: true },
        });
        for (const r of rows) vectors.set(r.frameId, r.vector);
        ctx.heartbeat({ read: vectors.size });
      }
      // A frame deleted since it was listed drops out; the rest keep their order.
      const frameIds = picked.filter((id) => vectors.has(id));
      const data = frameIds.map((id) => vectors.get(id)!);
      const dims = data[0]?.length ?? 0;
      if (frameIds.length < PROJECTION_MIN_FRAMES || data.some((v) => v.length !== dims))
        throw ApplicationFailure.nonRetryable(
          `the ${params.model} embeddings in scope are too few or differ in length`,
          'TooFewEmbeddings',
        );
      let points: Point2[];
      let explained: [number, number] | undefined;
      if (p.method === 'pca') {
        const pca = projectPca(data);
        points = pca.points;
        explained = pca.explained_variance;
      } else {
        points = await projectUmap(
          data,
          { seed: params.seed, n_neighbors: params.n_neighbors, min_dist: params.min_dist },
          async (epoch, epochs) => {
            ctx.heartbeat({ epoch, epochs });
            await yieldToOthers();
          },
        );
      }
      const outcome: ProjectionOutcome = {
        frames_in_scope: counts.frames,
        frames_without_embedding: counts.frames - counts.embedded,
        frames_projected: frameIds.length,
        sampled: ids.length > params.max_frames,
        ...(explained ? { explained_variance: explained } : {}),
      };
      await db.$transaction(
        async (tx) => {
          // Taken FOR UPDATE, so a delete waits for this write or this write sees it gone.
          const [live] = await tx.$queryRaw<Array<{ id: string }>>`
            SELECT id::text FROM explore_projections WHERE id = ${p.id}::uuid FOR UPDATE`;
          if (!live) return;
          await tx.exploreProjectionPoint.deleteMany({ where: { projectionId: p.id } });
          for (let i = 0; i < frameIds.length; i += WRITE_BATCH)
            await tx.exploreProjectionPoint.createMany({
              data: frameIds.slice(i, i + WRITE_BATCH).map((frameId, k) => ({
                projectionId: p.id,
                frameId,
                x: points[i + k]![0],
                y: points[i + k]![1],
              })),
            });
          await tx.exploreProjection.update({
            where: { id: p.id },
            data: {
              status: 'completed',
              nPoints: frameIds.length,
              error: null,
              finishedAt: new Date(),
              params: { ...(p.params as object), outcome } as unknown as Prisma.InputJsonValue,
            },
          });
        },
        { timeout: 120_000, maxWait: 10_000 },
      );
      return { ...outcome, points: frameIds.length };
    },

    /** Marks a projection failed with the reason (its workflow gave up). */
    async failExploreProjection(input: { projectionId: string; error: string }): Promise<void> {
      await db.exploreProjection.updateMany({
        where: { id: input.projectionId },
        data: { status: 'failed', error: input.error.slice(0, 2000), finishedAt: new Date() },
      });
    },
  };
}

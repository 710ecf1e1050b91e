import type { BatchPick } from '../../core/activelearn/select';
import type { Weights } from '../../core/activelearn/score';
import { ConflictError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { ActiveLearnBatch, ActiveLearnBatchFrame, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { Pool } from './pool';

/** Saved active-learning batches (docs/activelearn.md): the picks, and their routing to review. */

/** Serialises batch writes, so two selections racing for the same frames cannot both keep them. */
const BATCH_LOCK = 0x61_6c_62_61; // 'alba'

export interface NewBatch {
  request: Record<string, unknown>;
  weights: Weights;
  threshold: number;
  routeToReview: boolean;
  picks: BatchPick[];
  pool: Pool;
}

type FrameOfPick = { session_id: string; index: number };

export const pickOut = (
  p: Pick<ActiveLearnBatchFrame, 'frameId' | 'rank' | 'score' | 'parts'>,
  frame: FrameOfPick | undefined,
) => ({
  rank: p.rank,
  frame_id: p.frameId,
  session_id: frame?.session_id ?? null,
  index: frame?.index ?? null,
  score: p.score,
  parts: p.parts,
});

export const batchOut = (
  b: ActiveLearnBatch & { frames: ActiveLearnBatchFrame[] },
  frames: ReadonlyMap<string, FrameOfPick>,
) => ({
  batch_id: b.id,
  created_at: b.createdAt.toISOString(),
  created_by: b.createdBy,
  request: b.request,
  weights: b.weights,
  threshold: b.threshold,
  candidates: b.candidates,
  candidates_without_embedding: b.unembedded,
  route_to_review: b.routeToReview,
  routed_objects: b.routedObjects,
  frames: b.frames.length,
  picks: [...b.frames].sort((x, y) => x.rank - y.rank).map((p) => pickOut(p, frames.get(p.frameId))),
});

/** Session and index of frames, for the answers. */
export async function framePlaces(db: Db, frameIds: readonly string[]): Promise<Map<string, FrameOfPick>> {
  const rows = await db.frame.findMany({
    where: { id: { in: [...frameIds] } },
    select: { id: true, sessionId: true, index: true },
  });
  return new Map(rows.map((f) => [f.id, { session_id: f.sessionId, index: f.index }]));
}

/**
 * Saves a batch and its picks in one transaction and, when asked, routes them to review: the picked
 * frames' machine objects that were auto-accepted move to `review` (a demotion, as the critic's veto
 * is; spec States and transitions), with their version bumped, so they enter the review queue
 * (GET /api/triage). Objects already in review, submitted or annotate stay where they are. A frame
 * another batch took since the pool was read: 409, nothing saved.
 */
export async function saveBatch(db: Db, batch: NewBatch, actor: Pick<Actor, 'userId' | 'requestId'>) {
  const objectsOf = new Map(batch.pool.frames.map((f) => [f.id, f.objects.map((o) => o.id)]));
  const frameIds = batch.picks.map((p) => p.frame_id);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${BATCH_LOCK}::bigint)`;
    const taken = await tx.activeLearnBatchFrame.findMany({
      where: { frameId: { in: frameIds } },
      select: { frameId: true },
    });
    if (taken.length)
      throw new ConflictError(
        `another batch picked ${taken.length} of these frames meanwhile (${taken.map((t) => t.frameId).join(', ')}); select again`,
      );
    const row = await tx.activeLearnBatch.create({
      data: {
        request: batch.request as Prisma.InputJsonValue,
        weights: batch.weights,
        threshold: batch.threshold,
        candidates: batch.pool.frames.length,
        unembedded: batch.pool.unembedded,
        routeToReview: batch.routeToReview,
        createdBy: actor.userId,
      },
    });
    await tx.activeLearnBatchFrame.createMany({
      data: batch.picks.map((p) => ({
        batchId: row.id,
        frameId: p.frame_id,
        rank: p.rank,
        score: p.score,
        parts: p.parts as unknown as Prisma.InputJsonValue,
        objectIds: objectsOf.get(p.frame_id) ?? [],
      })),
    });
    const pickedObjects = frameIds.flatMap((id) => objectsOf.get(id) ?? []);
    const routed = batch.routeToReview
      ? await tx.$queryRaw<Array<{ id: string }>>`
          UPDATE objects SET state = 'review', version = version + 1, updated_at = now()
           WHERE id = ANY(${pickedObjects}::uuid[]) AND state = 'auto_accept'
             AND source = ANY(${[...MACHINE_SOURCE_SPELLINGS]}::text[])
          RETURNING id::text`
      : [];
    const saved = await tx.activeLearnBatch.update({
      where: { id: row.id },
      data: { routedObjects: routed.length },
      include: { frames: true },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'activelearn.batch.created',
      subjectType: 'activelearn_batch',
      subjectId: row.id,
      detail: {
        frames: frameIds,
        route_to_review: batch.routeToReview,
        routed_object_ids: routed.map((r) => r.id),
      },
      requestId: actor.requestId,
    });
    return saved;
  });
}

/** Batches newest first, paged by id cursor like the training list. */
export async function listBatches(db: Db, page: { limit: number; cursor?: string | undefined }) {
  const rows = await db.activeLearnBatch.findMany({
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    include: { frames: true },
    ...idCursorArgs(page),
  });
  const { page: shown, next_cursor } = idPage(rows, page.limit);
  const places = await framePlaces(
    db,
    shown.flatMap((b) => b.frames.map((f) => f.frameId)),
  );
  return { items: shown.map((b) => batchOut(b, places)), limit: page.limit, next_cursor };
}

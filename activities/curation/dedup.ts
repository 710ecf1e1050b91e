import {
  DEDUP_MAX_THRESHOLD,
  dedupFrameCap,
  duplicateClusters,
  type HashedFrame,
} from '../../core/curation/dedup';
import { RefusedError } from '../../core/errors';
import { Prisma } from '../../generated/prisma/client';
import type { Db } from '../db';
import { checkSessions } from './slice-query';

export interface DedupRequest {
  threshold: number;
  sessionIds?: string[];
  limitClusters: number;
}

/**
 * Near-duplicate clusters across sessions among the frames with a stored pHash (all, or those of
 * `sessionIds`). More frames than the threshold's cap (core/curation/dedup.ts) are refused before
 * any is read.
 */
export async function findDuplicateFrames(db: Db, request: DedupRequest) {
  await checkSessions(db, request.sessionIds, 'body.session_ids');
  const scope = request.sessionIds?.length
    ? Prisma.sql`AND session_id = ANY(${request.sessionIds}::uuid[])`
    : Prisma.empty;
  const [counts] = await db.$queryRaw<Array<{ hashed: bigint; unhashed: bigint }>>`
    SELECT count(phash) AS hashed, count(*) - count(phash) AS unhashed FROM frames WHERE TRUE ${scope}`;
  const considered = Number(counts!.hashed);
  const cap = dedupFrameCap(request.threshold);
  if (considered > cap)
    throw new RefusedError(
      `${considered} hashed frames are more than the ${cap} one request may cluster at threshold ${request.threshold} (docs/curation.md); name fewer sessions in session_ids or lower the threshold`,
      { frames: considered, frame_cap: cap, threshold: request.threshold },
    );
  const frames = await db.$queryRaw<Array<{ id: string; session_id: string; index: number; phash: string }>>`
    SELECT id::text, session_id::text, index, phash FROM frames
     WHERE phash IS NOT NULL ${scope}`;
  const result = duplicateClusters(
    frames.map((f): HashedFrame => ({
      frameId: f.id,
      sessionId: f.session_id,
      index: f.index,
      phash: f.phash,
    })),
    request.threshold,
  );
  return {
    threshold: request.threshold,
    max_threshold: DEDUP_MAX_THRESHOLD,
    method: {
      name: 'multi-index hashing',
      band_bits: result.plan.widths,
      band_radius: result.plan.radius,
    },
    frames_considered: result.hashed,
    frames_without_hash: Number(counts!.unhashed) + (frames.length - result.hashed),
    frame_cap: cap,
    links: result.links,
    clusters_total: result.clusters.length,
    clusters: result.clusters.slice(0, request.limitClusters),
    truncated: result.clusters.length > request.limitClusters,
  };
}

import { setImmediate as yieldToOthers } from 'node:timers/promises';
import { EMBEDDING_MODELS, type EmbeddingModelName } from '../../core/curation/embedding';
import {
  DIVERSE_MAX_FRAMES,
  DIVERSE_WORK_BUDGET,
  kCenterPicks,
  type KCenterPick,
} from '../../core/curation/kcenter';
import type { SlicePredicate } from '../../core/curation/slice';
import { RefusedError } from '../../core/errors';
import type { Db } from '../db';
import { sliceQuery, type SliceQuery } from './slice-query';

export interface DiverseRequest {
  k: number;
  model: EmbeddingModelName;
  /** Only frames with an object of this slice. */
  predicate: SlicePredicate | null;
  sessionIds: string[] | null;
}

/** Vectors are read this many at a time, straight into one matrix. */
const READ_PAGE = 2000;

interface EmbeddedFrame {
  id: string;
  session_id: string;
  index: number;
  /** array_send(vector): PostgreSQL's binary form; its text form of 576 reals costs far more to parse. */
  vector: Uint8Array;
}

const FLOAT4_OID = 700;

/**
 * Copies a `real[]` in array_send's layout into `into` at `at`: int4 ndim, int4 has-nulls, oid
 * element type, (int4 size, int4 lower bound) per dimension, then per element an int4 length and
 * the big-endian float4. False, copying nothing, for anything but a 1-D array of exactly `dims`
 * reals without nulls.
 */
export function readReal4Array(bytes: Uint8Array, dims: number, into: Float32Array, at: number): boolean {
  if (bytes.byteLength !== 20 + 8 * dims) return false;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const header = [view.getInt32(0), view.getInt32(4), view.getUint32(8), view.getInt32(12)];
  if (header.join() !== [1, 0, FLOAT4_OID, dims].join()) return false;
  for (let d = 0; d < dims; d++) into[at + d] = view.getFloat32(24 + 8 * d);
  return true;
}

/**
 * The stored embeddings of `model` of up to `count` frames in `scope` (a condition over `fr`), as one
 * matrix in frame id order, read a page at a time in PostgreSQL's binary form, with each frame's
 * session and index. Frames deleted since they were counted leave it short.
 */
export async function readEmbeddings(
  db: Db,
  q: SliceQuery,
  scope: (param: (value: unknown) => string) => string,
  modelName: EmbeddingModelName,
  count: number,
): Promise<{
  ids: string[];
  frames: Map<string, { session_id: string; index: number }>;
  points: Float32Array;
}> {
  const model = EMBEDDING_MODELS[modelName];
  const ids: string[] = [];
  const frames = new Map<string, { session_id: string; index: number }>();
  const data = new Float32Array(count * model.dims);
  for (let after: string | null = null; ids.length < count;) {
    const page: EmbeddedFrame[] = await q.rows<EmbeddedFrame>(
      db,
      (param) => `SELECT fr.id::text, fr.session_id::text, fr.index, array_send(e.vector) AS vector
                    FROM frames fr JOIN frame_embeddings e ON e.frame_id = fr.id AND e.model = ${param(modelName)}
                   WHERE ${scope(param)}${after ? ` AND fr.id > ${param(after)}::uuid` : ''}
                   ORDER BY fr.id LIMIT ${param(Math.min(READ_PAGE, count - ids.length))}::int`,
    );
    if (page.length === 0) break;
    for (const row of page) {
      if (!readReal4Array(row.vector, model.dims, data, ids.length * model.dims))
        throw new Error(`frame ${row.id}'s ${modelName} embedding is not ${model.dims} reals`);
      ids.push(row.id);
      frames.set(row.id, { session_id: row.session_id, index: row.index });
    }
    after = page[page.length - 1]!.id;
  }
  return { ids, frames, points: data.subarray(0, ids.length * model.dims) };
}

/**
 * A diverse subset of the frames in scope (a slice's frames, sessions, or the corpus) by k-center
 * greedy on their stored embeddings (core/curation/kcenter.ts). Frames in scope without an
 * embedding of the model are counted, not embedded here (POST /api/curation/embed does that). More
 * candidates, or more work (k × candidates), than the caps is refused before any vector is read.
 */
export async function diverseFrames(db: Db, request: DiverseRequest) {
  const model = EMBEDDING_MODELS[request.model];
  const q = sliceQuery(request.predicate ?? {});
  // The frames in scope, as a condition over `fr`; the slice's own aliases stay inside its subquery.
  const scope = (param: (value: unknown) => string) =>
    [
      request.predicate ? `fr.id IN (SELECT o.frame_id FROM ${q.from} WHERE ${q.where})` : 'TRUE',
      request.sessionIds ? `fr.session_id = ANY(${param(request.sessionIds)}::uuid[])` : 'TRUE',
    ].join(' AND ');
  const [counts] = await q.rows<{ embedded: bigint; missing: bigint }>(db, (param) => {
    const modelParam = param(request.model);
    return `SELECT count(e.frame_id) AS embedded, count(*) - count(e.frame_id) AS missing
              FROM frames fr LEFT JOIN frame_embeddings e ON e.frame_id = fr.id AND e.model = ${modelParam}
             WHERE ${scope(param)}`;
  });
  const candidates = Number(counts!.embedded);
  const k = Math.min(request.k, candidates);
  if (candidates > DIVERSE_MAX_FRAMES || k * candidates > DIVERSE_WORK_BUDGET)
    throw new RefusedError(
      `${candidates} embedded frames in scope with k = ${request.k} is more than one request may select from (at most ${DIVERSE_MAX_FRAMES} frames and k × frames ≤ ${DIVERSE_WORK_BUDGET}, docs/curation.md); narrow it with slice_id or session_ids, or lower k`,
      { candidates, k: request.k, max_frames: DIVERSE_MAX_FRAMES, work_budget: DIVERSE_WORK_BUDGET },
    );

  const { ids, frames, points } = await readEmbeddings(db, q, scope, request.model, candidates);
  const picks: Array<
    Omit<KCenterPick, 'id'> & { rank: number; frame_id: string; session_id: string; index: number }
  > = [];
  if (k > 0)
    for (const pick of kCenterPicks({ ids, dims: model.dims, data: points })) {
      picks.push({
        rank: picks.length + 1,
        frame_id: pick.id,
        ...frames.get(pick.id)!,
        distance: pick.distance,
        covering_radius: pick.covering_radius,
      });
      if (picks.length >= k) break;
      // Each pick is one pass over the candidates: let other requests in between.
      await yieldToOthers();
    }
  return {
    model: request.model,
    method: 'k-center greedy (farthest point), first pick farthest from the mean, ties by frame id',
    k: request.k,
    candidates: ids.length,
    frames_without_embedding: Number(counts!.missing),
    covering_radius: picks.at(-1)?.covering_radius ?? null,
    picks,
  };
}

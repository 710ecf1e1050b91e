import type { CandidateObject, ClassCounts } from '../../core/activelearn/score';
import type { CandidateFrame } from '../../core/activelearn/select';
import { EMBEDDING_MODELS, type EmbeddingModelName } from '../../core/curation/embedding';
import { DIVERSE_MAX_FRAMES, DIVERSE_WORK_BUDGET } from '../../core/curation/kcenter';
import type { SlicePredicate } from '../../core/curation/slice';
import { RefusedError } from '../../core/errors';
import { MACHINE_SOURCE_SPELLINGS } from '../../core/objects/sources';
import type { Db } from '../db';
import { readReal4Array } from '../curation/diverse';
import { sliceQuery } from '../curation/slice-query';

/**
 * The candidate pool of active learning (docs/activelearn.md): frames with at least one
 * machine-made object (core/objects/sources.ts: not yet verified by a person), each with those
 * objects (class, confidence, the latest provenance's class entropy) and its stored embedding.
 */

/** Candidate frames one request may score or select from: the diverse subset's cap, for the same reason. */
export const POOL_MAX_FRAMES = DIVERSE_MAX_FRAMES;
/** Machine objects read for one pool (each is one row to score). */
export const POOL_MAX_OBJECTS = 200_000;

export interface PoolScope {
  sessionIds: readonly string[] | null;
  classes: readonly string[] | null;
  frameIds: readonly string[] | null;
  /** Leave out frames an earlier batch picked, so a batch never repeats an open one. */
  excludeBatched: boolean;
  /** Sessions left out (those whose consent blocks a selection). */
  excludeSessionIds?: readonly string[] | undefined;
  model: EmbeddingModelName;
}

export interface Pool {
  frames: CandidateFrame[];
  counts: ClassCounts;
  /** Candidates without an embedding of the model (their diversity is 0). */
  unembedded: number;
}

/** Vectors are read this many at a time. */
const READ_PAGE = 2000;

/** The pool's objects as a slice: machine-made, of the scope's classes and sessions. */
export const predicateOf = (scope: PoolScope): SlicePredicate => ({
  sources: [...MACHINE_SOURCE_SPELLINGS],
  ...(scope.classes ? { classes: [...scope.classes] } : {}),
  ...(scope.sessionIds ? { session_ids: [...scope.sessionIds] } : {}),
  ...(scope.excludeSessionIds?.length ? { exclude_session_ids: [...scope.excludeSessionIds] } : {}),
});

/** Objects per class over the whole corpus, as the curation summary's shares count them. */
async function classCounts(db: Db): Promise<ClassCounts> {
  const rows = await db.$queryRaw<Array<{ name: string; n: bigint }>>`
    SELECT c.name, count(*) AS n FROM objects o JOIN ontology_classes c ON c.id = o.class_id GROUP BY c.name`;
  const byClass = new Map(rows.map((r) => [r.name, Number(r.n)]));
  return { total: [...byClass.values()].reduce((a, b) => a + b, 0), byClass };
}

/**
 * Reads the pool. More candidate frames or objects than the caps, or (with a diversity weight) more
 * distance work than the diverse subset allows (picks × embedded candidates), is refused with 422
 * before any object or vector is read.
 */
export async function readPool(db: Db, scope: PoolScope, picks: number, diversity: boolean): Promise<Pool> {
  const q = sliceQuery(predicateOf(scope));
  const where = (param: (value: unknown) => string) =>
    [
      q.where,
      scope.frameIds ? `o.frame_id = ANY(${param(scope.frameIds)}::uuid[])` : 'TRUE',
      scope.excludeBatched
        ? 'NOT EXISTS (SELECT 1 FROM active_learning_batch_frames b WHERE b.frame_id = o.frame_id)'
        : 'TRUE',
    ].join(' AND ');
  const [size] = await q.rows<{ frames: bigint; objects: bigint; embedded: bigint }>(
    db,
    (param) => `SELECT count(DISTINCT o.frame_id) AS frames, count(*) AS objects,
                       count(DISTINCT e.frame_id) AS embedded
                  FROM ${q.from} LEFT JOIN frame_embeddings e ON e.frame_id = o.frame_id AND e.model = ${param(scope.model)}
                 WHERE ${where(param)}`,
  );
  const frames = Number(size!.frames);
  const objects = Number(size!.objects);
  const embedded = Number(size!.embedded);
  const work = diversity ? Math.min(picks, frames) * embedded : 0;
  if (frames > POOL_MAX_FRAMES || objects > POOL_MAX_OBJECTS || work > DIVERSE_WORK_BUDGET)
    throw new RefusedError(
      `${frames} candidate frames (${objects} machine-made objects, ${embedded} embedded) for ${picks} picks is more than one request may score: at most ${POOL_MAX_FRAMES} frames, ${POOL_MAX_OBJECTS} objects and picks × embedded frames ≤ ${DIVERSE_WORK_BUDGET} (docs/activelearn.md); narrow it with session_ids or classes, lower the budget, or set the diversity weight to 0`,
      {
        candidates: frames,
        objects,
        embedded,
        picks,
        max_frames: POOL_MAX_FRAMES,
        max_objects: POOL_MAX_OBJECTS,
        work_budget: DIVERSE_WORK_BUDGET,
      },
    );

  const rows = await q.rows<{
    id: string;
    frame_id: string;
    class_name: string;
    conf: number | null;
    entropy: number | null;
  }>(
    db,
    (param) => `SELECT o.id::text, o.frame_id::text, c.name AS class_name, o.conf, p.entropy
                  FROM ${q.from}
                  LEFT JOIN LATERAL (SELECT entropy FROM provenance p WHERE p.object_id = o.id
                                      ORDER BY p.created_at DESC, p.id DESC LIMIT 1) p ON TRUE
                 WHERE ${where(param)}
                 ORDER BY o.frame_id, o.id`,
  );
  const byFrame = new Map<string, CandidateObject[]>();
  for (const r of rows) {
    const list = byFrame.get(r.frame_id) ?? [];
    list.push({ id: r.id, className: r.class_name, conf: r.conf, entropy: r.entropy });
    byFrame.set(r.frame_id, list);
  }
  const vectors = await readEmbeddings(db, [...byFrame.keys()], scope.model);
  return {
    frames: [...byFrame].map(([id, objs]) => ({ id, objects: objs, embedding: vectors.get(id) ?? null })),
    counts: await classCounts(db),
    unembedded: byFrame.size - vectors.size,
  };
}

/** The frames' embeddings of the model, read in their binary form into one matrix; each a view of its row. */
async function readEmbeddings(
  db: Db,
  frameIds: readonly string[],
  modelName: EmbeddingModelName,
): Promise<Map<string, Float32Array>> {
  const { dims } = EMBEDDING_MODELS[modelName];
  const out = new Map<string, Float32Array>();
  for (let at = 0; at < frameIds.length; at += READ_PAGE) {
    const ids = frameIds.slice(at, at + READ_PAGE);
    const page = await db.$queryRaw<Array<{ frame_id: string; vector: Uint8Array }>>`
      SELECT frame_id::text, array_send(vector) AS vector FROM frame_embeddings
       WHERE frame_id = ANY(${ids}::uuid[]) AND model = ${modelName}`;
    const matrix = new Float32Array(page.length * dims);
    page.forEach((row, i) => {
      if (!readReal4Array(row.vector, dims, matrix, i * dims))
        throw new Error(`frame ${row.frame_id}'s ${modelName} embedding is not ${dims} reals`);
      out.set(row.frame_id, matrix.subarray(i * dims, (i + 1) * dims));
    });
  }
  return out;
}

import { CLASS_SHARE_SQL, sliceSql, type SlicePredicate } from '../../core/curation/slice';
import { ConflictError, InputError, RefusedError } from '../../core/errors';
import {
  DEFAULT_PARITY_EPSILON,
  splitPredicate,
  type EvalFrame,
  type EvalGoldBox,
  type EvalPrediction,
  type Scope,
} from '../../core/evalgov';
import type { Box } from '../../core/geometry';
import type { GoldSet, InferenceRun, Prisma } from '../../generated/prisma/client';
import { findSlice, slicePredicate } from '../curation/slices';
import type { Db } from '../db';
import { findGold } from '../quality/gold';
import { findRun } from '../quality/inference-runs';

/**
 * What evaluation governance reads: a sealed gold set's frozen boxes and frames, a usable run's
 * predictions on them, and what a curation slice selects of them (core/evalgov/slice-scope.ts).
 */

/**
 * Most predictions of one run one request reads on a gold set's frames: evaluations run inside the
 * request (like the gold measure), and both COCO harnesses over 100,000 predictions take seconds.
 */
export const EVAL_MAX_PREDICTIONS = 100_000;

/** The harness divergence the promotion gate tolerates: config.quality.parityEpsilon, else 1e-6. */
export function parityEpsilon(config: object): number {
  const value = (config as { quality?: { parityEpsilon?: unknown } }).quality?.parityEpsilon;
  return typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : DEFAULT_PARITY_EPSILON;
}

/**
 * A run AP evaluation may read: it exists (404), is not reconstructed (422 naming the reason
 * `reconstructed`: its confidences are null, spec Other lifecycles), and has completed (409).
 */
export async function usableRun(db: Db, id: string, field = 'run_id'): Promise<InferenceRun> {
  const run = await findRun(db, id);
  if (run.reconstructed)
    throw new RefusedError(
      `inference run ${run.id} (${field}) is reconstructed (null confidences): AP evaluation is refused`,
      { reason: 'reconstructed', run_id: run.id, field },
    );
  if (run.status !== 'completed')
    throw new ConflictError(`inference run ${run.id} (${field}) is ${run.status}, not completed`);
  return run;
}

export interface GoldData {
  gold: GoldSet;
  frames: EvalFrame[];
  boxes: EvalGoldBox[];
}

/** A sealed gold set's boxes and frames, in the set's frame order (404 unknown, 409 unsealed). */
export async function loadGold(db: Db, goldId: string): Promise<GoldData> {
  const gold = await findGold(db, goldId);
  const [items, frameRows] = await Promise.all([
    db.goldItem.findMany({
      where: { goldId: gold.id },
      select: { frameId: true, classId: true, bbox: true },
      orderBy: [{ frameId: 'asc' }, { objectId: 'asc' }],
    }),
    db.frame.findMany({
      where: { id: { in: gold.frameIds } },
      select: { id: true, width: true, height: true },
    }),
  ]);
  const boxes = items.map((i) => ({ frame_id: i.frameId, class_id: i.classId, bbox: i.bbox as Box }));
  const dims = new Map(frameRows.map((f) => [f.id, f]));
  // A gold frame outlives its live frame (no foreign key): its size is then its boxes' extent.
  const extent = new Map<string, { width: number; height: number }>();
  for (const b of boxes) {
    const e = extent.get(b.frame_id) ?? { width: 1, height: 1 };
    extent.set(b.frame_id, { width: Math.max(e.width, b.bbox[2]), height: Math.max(e.height, b.bbox[3]) });
  }
  const frames = gold.frameIds.map((id) => {
    const d = dims.get(id) ?? extent.get(id) ?? { width: 1, height: 1 };
    return { id, width: d.width, height: d.height };
  });
  return { gold, frames, boxes };
}

/** A run's predictions on the given frames (422 beyond EVAL_MAX_PREDICTIONS). */
export async function loadPredictions(
  db: Db,
  run: InferenceRun,
  frameIds: readonly string[],
): Promise<EvalPrediction[]> {
  const where = { runId: run.id, frameId: { in: [...frameIds] } };
  const n = await db.prediction.count({ where });
  if (n > EVAL_MAX_PREDICTIONS)
    throw new RefusedError(
      `run ${run.id} has ${n} predictions on these frames; one evaluation reads at most ${EVAL_MAX_PREDICTIONS}`,
      { reason: 'too_many_predictions', predictions: n, max: EVAL_MAX_PREDICTIONS },
    );
  const rows = await db.prediction.findMany({
    where,
    select: { frameId: true, classId: true, conf: true, bbox: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((p) => {
    if (p.conf === null)
      throw new RefusedError(`run ${run.id} has predictions without a confidence: AP evaluation is refused`, {
        reason: 'reconstructed',
        run_id: run.id,
      });
    return { frame_id: p.frameId, class_id: p.classId, conf: p.conf, bbox: p.bbox as Box };
  });
}

export interface SliceScope {
  slice_id: string;
  slice_name: string;
  scope: Scope;
  /** Object conditions of the slice the evaluation does not apply. */
  not_applied: string[];
}

/** The gold frames a slice's frame conditions select, in the gold set's order. */
async function sliceFrames(db: Db, predicate: SlicePredicate | null, goldFrameIds: readonly string[]) {
  if (!predicate) return [...goldFrameIds];
  const compiled = sliceSql(predicate, 1);
  const params = [...compiled.params, goldFrameIds];
  const rows = await db.$queryRawUnsafe<Array<{ id: string }>>(
    `SELECT f.id::text AS id FROM frames f WHERE f.id = ANY($${params.length}::uuid[]) AND ${compiled.where}`,
    ...params,
  );
  const selected = new Set(rows.map((r) => r.id));
  return goldFrameIds.filter((id) => selected.has(id));
}

/** The classes a slice's class conditions select (a class stands in for `o`, the object it would be). */
async function sliceClasses(db: Db, predicate: SlicePredicate | null): Promise<Set<number> | null> {
  if (!predicate) return null;
  const compiled = sliceSql(predicate, 1);
  const rows = await db.$queryRawUnsafe<Array<{ id: number }>>(
    `SELECT c.id FROM ontology_classes c CROSS JOIN LATERAL (SELECT c.id AS class_id) o${
      compiled.needsClassShare ? ` JOIN (${CLASS_SHARE_SQL}) cs ON cs.class_id = c.id` : ''
    } WHERE ${compiled.where}`,
    ...compiled.params,
  );
  return new Set(rows.map((r) => r.id));
}

/** Each named slice (404 unknown) as a scope of the gold set (core/evalgov/slice-scope.ts). */
export async function sliceScopes(
  db: Db,
  sliceIds: readonly string[],
  goldFrameIds: readonly string[],
): Promise<SliceScope[]> {
  const duplicates = sliceIds.filter((id, i) => sliceIds.indexOf(id) !== i);
  if (duplicates.length)
    throw new InputError('a slice is named twice', [
      { field: 'body.slice_ids', message: 'duplicate slice id' },
    ]);
  const out: SliceScope[] = [];
  for (const id of sliceIds) {
    const slice = await findSlice(db, id);
    const split = splitPredicate(slicePredicate(slice));
    const [frameIds, classIds] = await Promise.all([
      sliceFrames(db, split.frame, goldFrameIds),
      sliceClasses(db, split.classes),
    ]);
    out.push({
      slice_id: slice.id,
      slice_name: slice.name,
      scope: { frameIds, classIds },
      not_applied: split.not_applied,
    });
  }
  return out;
}

/** The ontology rows the roll-ups and safety floors read. */
export const ontologyRows = (db: Db | Prisma.TransactionClient) =>
  db.ontologyClass.findMany({ select: { id: true, name: true, l0: true, l1: true } });

export interface OneSliceScope {
  /** The named slice, or null: the whole gold set. */
  slice: SliceScope | null;
  scope: Scope;
  /** The slice as an operation's params name it (nulls and no conditions for the whole set). */
  sliceParams: { slice_id: string | null; slice_name: string | null; not_applied: string[] };
}

/** The scope of an evaluation over at most one slice: the slice named (404 unknown), else the whole gold set. */
export async function oneSliceScope(
  db: Db,
  sliceId: string | undefined,
  goldFrameIds: readonly string[],
): Promise<OneSliceScope> {
  const slice = (await sliceScopes(db, sliceId ? [sliceId] : [], goldFrameIds))[0] ?? null;
  return {
    slice,
    scope: slice?.scope ?? { frameIds: [...goldFrameIds], classIds: null },
    sliceParams: {
      slice_id: slice?.slice_id ?? null,
      slice_name: slice?.slice_name ?? null,
      not_applied: slice?.not_applied ?? [],
    },
  };
}

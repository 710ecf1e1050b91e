import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import {
  BACKGROUND,
  classFigures,
  confusionCells,
  confusionMembers,
  confusionTotals,
  OPTIMAL_COMPONENT_MAX,
  type ConfusionCell,
  type PredictionBox,
  type ReferenceBox,
} from '../../core/explore/confusion';
import type { Box } from '../../core/geometry';
import { unverifiedReason } from '../../core/quality/gold';
import { measureAgainstGold } from '../../core/quality/gold-measure';
import type { EvalOperation, InferenceRun, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { findGold } from '../quality/gold';
import { findRun, scopeFrames } from '../quality/inference-runs';
import { recordOperation } from '../quality/operations';
import { inOrder, newestFirst, type Page } from './paging';

/**
 * Explore evaluations (docs/quality-explore.md): an inference run against a reference (a sealed
 * gold set, or the accepted human objects of the run's human-verified frames) as a confusion matrix
 * whose every member (a matched pair, a missed reference, a false detection) is stored, so the
 * patches of any cell can be paged and cropped. Each evaluation is an eval operation
 * (`explore_eval`); its members reference the operation's id.
 */

export const EXPLORE_EVAL_OP = 'explore_eval';
/** Most frames one evaluation covers (the run's frames, or the gold set's). */
export const EXPLORE_EVAL_MAX_FRAMES = 20_000;
/** Most boxes (references plus predictions) one evaluation matches and stores as members. */
export const EXPLORE_EVAL_MAX_BOXES = 100_000;
/**
 * Most boxes (references plus predictions over min_conf) on one frame: the matching compares every
 * pair on a frame, so a frame is bounded, not only the whole.
 */
export const EXPLORE_EVAL_MAX_BOXES_PER_FRAME = 2000;
/** Members are written this many per statement, inside the evaluation's one transaction. */
const MEMBER_BATCH = 5000;

export const EXPLORE_EVAL_MATCHING = `class-agnostic optimal assignment per frame (munkres), maximising summed IoU over pairs with IoU ≥ iou_thr; ties go to same-class pairs; overlap components with more than ${OPTIMAL_COMPONENT_MAX} boxes on each side are matched greedily (greedy_components)`;

export interface ExploreEvalInput {
  run_id: string;
  gold_id?: string | null | undefined;
  iou_thr: number;
  min_conf: number;
  ap: boolean;
  alpha: number;
  n_boot: number;
  seed: number;
}

type ClassNames = Map<number, string>;

async function classNames(db: Db): Promise<ClassNames> {
  return new Map(
    (await db.ontologyClass.findMany({ select: { id: true, name: true } })).map((c) => [c.id, c.name]),
  );
}

const nameOf = (names: ClassNames, id: number): string =>
  id === BACKGROUND ? 'background' : (names.get(id) ?? String(id));

const namedCells = (cells: readonly ConfusionCell[], names: ClassNames) =>
  cells.map((c) => ({
    true_class_id: c.true_class_id,
    true_class: nameOf(names, c.true_class_id),
    pred_class_id: c.pred_class_id,
    pred_class: nameOf(names, c.pred_class_id),
    count: c.count,
  }));

const namedFigures = (cells: readonly ConfusionCell[], names: ClassNames) =>
  classFigures(cells).map(({ class_id, ...f }) => ({ class_id, class_name: nameOf(names, class_id), ...f }));

/**
 * The frames a run was asked to cover (a GPU or reconstructed run's scope, re-read) and every frame
 * it predicted on, in that order. An imported run's scope records no frame list, so its frames are
 * those it predicted on.
 */
async function runFrameIds(db: Db, run: InferenceRun): Promise<string[]> {
  const scope = (run.scope ?? {}) as Record<string, unknown>;
  const named =
    typeof scope.session_id === 'string' ||
    (Array.isArray(scope.frame_ids) && scope.frame_ids.every((id) => typeof id === 'string')) ||
    typeof scope.gold_id === 'string';
  let scoped: string[] = [];
  if (named)
    try {
      scoped = (
        await scopeFrames(db, {
          session_id: typeof scope.session_id === 'string' ? scope.session_id : undefined,
          frame_ids: Array.isArray(scope.frame_ids) ? (scope.frame_ids as string[]) : undefined,
          gold_id: typeof scope.gold_id === 'string' ? scope.gold_id : undefined,
          limit: typeof scope.limit === 'number' ? scope.limit : undefined,
        })
      ).map((f) => f.id);
    } catch (err) {
      // The gold set the run was scoped by is gone: its predictions still name their frames.
      if (!(err instanceof NotFoundError)) throw err;
    }
  const predicted = await db.$queryRaw<Array<{ frame_id: string }>>`
    SELECT DISTINCT frame_id::text FROM predictions WHERE run_id = ${run.id}::uuid ORDER BY 1`;
  const seen = new Set(scoped);
  return [...scoped, ...predicted.map((p) => p.frame_id).filter((id) => !seen.has(id))];
}

const tooLarge = (what: string, n: number, max: number) =>
  new RefusedError(
    `the evaluation would cover ${n} ${what}; at most ${max} are evaluated at once (docs/quality-explore.md): evaluate a smaller run or gold set`,
    { reason: 'too_large', [what]: n, [`max_${what}`]: max },
  );

interface Reference {
  kind: 'gold' | 'human';
  goldId: string | null;
  frameIds: string[];
  refs: ReferenceBox[];
  /** Human reference: the run's frames left out for want of a human decision on every object. */
  framesNotVerified: number;
}

async function goldReference(db: Db, goldId: string): Promise<Reference> {
  const gold = await findGold(db, goldId);
  if (gold.frameIds.length > EXPLORE_EVAL_MAX_FRAMES)
    throw tooLarge('frames', gold.frameIds.length, EXPLORE_EVAL_MAX_FRAMES);
  const items = await db.goldItem.findMany({
    where: { goldId: gold.id },
    select: { objectId: true, frameId: true, classId: true, bbox: true },
  });
  return {
    kind: 'gold',
    goldId: gold.id,
    frameIds: gold.frameIds,
    refs: items.map((i) => ({
      object_id: i.objectId,
      frame_id: i.frameId,
      class_id: i.classId,
      bbox: i.bbox as Box,
    })),
    framesNotVerified: 0,
  };
}

/**
 * The run's frames that are human-verified by the gold-set rule (core/quality/gold.ts: every object
 * carries a human decision, at least one accepted), and their accepted objects: what a gold set
 * sealed from those frames would hold, read live.
 */
async function humanReference(db: Db, run: InferenceRun): Promise<Reference> {
  const candidates = await runFrameIds(db, run);
  if (candidates.length > EXPLORE_EVAL_MAX_FRAMES)
    throw tooLarge('frames', candidates.length, EXPLORE_EVAL_MAX_FRAMES);
  const objects = await db.$queryRaw<
    Array<{ id: string; frame_id: string; class_id: number; bbox: number[]; source: string; state: string }>
  >`SELECT id::text, frame_id::text, class_id, bbox, source, state FROM objects
     WHERE frame_id = ANY(${candidates}::uuid[])`;
  const byFrame = new Map<string, typeof objects>();
  for (const o of objects) {
    const list = byFrame.get(o.frame_id);
    if (list) list.push(o);
    else byFrame.set(o.frame_id, [o]);
  }
  const frameIds = candidates.filter((id) => unverifiedReason(byFrame.get(id) ?? []) === null);
  if (!frameIds.length)
    throw new RefusedError(
      `none of the ${candidates.length} frames of inference run ${run.id} is human-verified (every object decided by a person, at least one accepted): there is no human reference to evaluate against`,
      { reason: 'no_reference', frames: candidates.length },
    );
  const verified = new Set(frameIds);
  return {
    kind: 'human',
    goldId: null,
    frameIds,
    refs: objects
      .filter((o) => verified.has(o.frame_id) && o.state === 'accepted')
      .map((o) => ({ object_id: o.id, frame_id: o.frame_id, class_id: o.class_id, bbox: o.bbox as Box })),
    framesNotVerified: candidates.length - frameIds.length,
  };
}

/**
 * Evaluates a run against its reference, stores the operation and every cell member in one
 * transaction, and answers the matrix, per-class precision and recall, and (against a gold set)
 * AP with bootstrap intervals from the gold measure.
 */
export async function runExploreEval(db: Db, input: ExploreEvalInput, actor: Actor) {
  const run = await findRun(db, input.run_id);
  const withAp = Boolean(input.gold_id) && input.ap;
  if (input.gold_id) await findGold(db, input.gold_id);
  if (withAp && run.reconstructed)
    throw new RefusedError(
      `inference run ${run.id} is reconstructed (null confidences): AP evaluation is refused; pass ap: false for the confusion matrix alone`,
      { reason: 'reconstructed' },
    );
  if (run.status !== 'completed')
    throw new ConflictError(`inference run ${run.id} is ${run.status}, not completed`);
  const reference = input.gold_id ? await goldReference(db, input.gold_id) : await humanReference(db, run);
  const [counted] = await db.$queryRaw<Array<{ n: bigint }>>`
    SELECT count(*) AS n FROM predictions WHERE run_id = ${run.id}::uuid AND frame_id = ANY(${reference.frameIds}::uuid[])`;
  const boxes = reference.refs.length + Number(counted!.n);
  if (boxes > EXPLORE_EVAL_MAX_BOXES) throw tooLarge('boxes', boxes, EXPLORE_EVAL_MAX_BOXES);
  const predictions = (
    await db.$queryRaw<
      Array<{ id: string; frame_id: string; class_id: number; conf: number | null; bbox: number[] }>
    >`
      SELECT id::text, frame_id::text, class_id, conf, bbox FROM predictions
       WHERE run_id = ${run.id}::uuid AND frame_id = ANY(${reference.frameIds}::uuid[])`
  ).map((p): PredictionBox => ({
    prediction_id: p.id,
    frame_id: p.frame_id,
    class_id: p.class_id,
    conf: p.conf,
    bbox: p.bbox as Box,
  }));
  // A null confidence (a reconstructed run) has no score to threshold: such predictions all count.
  const considered = predictions.filter((p) => p.conf === null || p.conf >= input.min_conf);
  const perFrame = new Map<string, number>();
  for (const b of [...reference.refs, ...considered])
    perFrame.set(b.frame_id, (perFrame.get(b.frame_id) ?? 0) + 1);
  const crowded = [...perFrame].filter(([, count]) => count > EXPLORE_EVAL_MAX_BOXES_PER_FRAME);
  if (crowded.length)
    throw new RefusedError(
      `${crowded.length} frame(s) hold more than ${EXPLORE_EVAL_MAX_BOXES_PER_FRAME} boxes (references and predictions over min_conf) each, more than one frame is matched at (docs/quality-explore.md): raise min_conf`,
      {
        reason: 'too_large',
        frames: crowded.slice(0, 20).map(([frame_id, boxes]) => ({ frame_id, boxes })),
        max_boxes_per_frame: EXPLORE_EVAL_MAX_BOXES_PER_FRAME,
      },
    );
  const stats = { greedy_components: 0 };
  const members = confusionMembers(reference.refs, considered, reference.frameIds, input.iou_thr, stats);
  const cells = confusionCells(members);
  const names = await classNames(db);

  let ap: Record<string, unknown> | null = null;
  if (withAp) {
    const m = measureAgainstGold(
      reference.refs.map((r) => ({ frame_id: r.frame_id, class_id: r.class_id, bbox: r.bbox })),
      predictions,
      reference.frameIds,
      { iou_thr: input.iou_thr, alpha: input.alpha, n_boot: input.n_boot, seed: input.seed },
    );
    ap = {
      matching:
        'COCO per class (predictions in descending confidence take the unmatched gold box they overlap most), every prediction whatever its confidence; 101-point interpolated AP',
      alpha: m.alpha,
      n_boot: m.n_boot,
      seed: m.seed,
      map: m.map,
      map_ci: m.map_ci,
      precision: m.precision,
      recall: m.recall,
      classes: m.classes.map((c) => ({
        class_id: c.class_id,
        class_name: nameOf(names, c.class_id),
        gold: c.gold,
        predicted: c.predicted,
        ap: c.ap,
        ap_ci: c.ap_ci,
        precision: c.precision,
        recall: c.recall,
        below_min_sample: c.below_min_sample,
      })),
    };
  }

  const params = {
    run_id: run.id,
    model_version: run.modelVersion,
    reference: reference.kind,
    gold_id: reference.goldId,
    iou_thr: input.iou_thr,
    min_conf: input.min_conf,
    ap: withAp,
    ...(withAp ? { alpha: input.alpha, n_boot: input.n_boot, seed: input.seed } : {}),
  };
  const result = {
    matching: EXPLORE_EVAL_MATCHING,
    greedy_components: stats.greedy_components,
    frames: reference.frameIds.length,
    frames_not_verified: reference.framesNotVerified,
    predictions_below_min_conf: predictions.length - considered.length,
    totals: confusionTotals(cells),
    cells: namedCells(cells, names),
    per_class: namedFigures(cells, names),
    ap,
  };
  const op = await db.$transaction(
    async (tx) => {
      const op = await recordOperation(tx, {
        opType: EXPLORE_EVAL_OP,
        subjectIds: [run.id, run.modelVersion, ...(reference.goldId ? [reference.goldId] : [])],
        params,
        result,
        actor,
      });
      for (let i = 0; i < members.length; i += MEMBER_BATCH)
        await tx.exploreEvalMember.createMany({
          data: members.slice(i, i + MEMBER_BATCH).map((m) => ({
            evalId: op.id,
            trueClassId: m.true_class_id,
            predClassId: m.pred_class_id,
            frameId: m.frame_id,
            objectId: m.object_id,
            predictionId: m.prediction_id,
            bbox: [...m.bbox],
            iou: m.iou,
            conf: m.conf,
          })),
        });
      return op;
    },
    { timeout: 120_000, maxWait: 10_000 },
  );
  return { eval_id: op.id, created_at: op.createdAt.toISOString(), ...params, ...result };
}

async function findEval(db: Db, id: string): Promise<EvalOperation> {
  const op = await db.evalOperation.findFirst({ where: { id, opType: EXPLORE_EVAL_OP } });
  if (!op) throw new NotFoundError(`no explore evaluation ${id}`);
  return op;
}

const evalOut = (op: EvalOperation) => {
  const p = op.params as Record<string, unknown>;
  const r = op.result as Record<string, unknown>;
  return {
    eval_id: op.id,
    run_id: p.run_id,
    model_version: p.model_version,
    reference: p.reference,
    gold_id: p.gold_id ?? null,
    iou_thr: p.iou_thr,
    min_conf: p.min_conf,
    frames: r.frames,
    totals: r.totals,
    map: (r.ap as { map?: number | null } | null)?.map ?? null,
    created_by: op.createdBy,
    created_at: op.createdAt.toISOString(),
  };
};

export async function listExploreEvals(db: Db, page: Page) {
  const { ids, next_cursor } = await newestFirst(db, 'evals', page);
  const ops = await db.evalOperation.findMany({ where: { id: { in: ids } } });
  return { items: inOrder(ids, ops, (o) => o.id).map(evalOut), limit: page.limit, next_cursor };
}

/** Removes an evaluation: its members and its operation, in one transaction. */
export async function deleteExploreEval(db: Db, id: string, actor: Actor) {
  const op = await findEval(db, id);
  const members = await db.$transaction(async (tx) => {
    const { count } = await tx.exploreEvalMember.deleteMany({ where: { evalId: op.id } });
    await tx.evalOperation.delete({ where: { id: op.id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'explore.eval.deleted',
      subjectType: 'eval_operation',
      subjectId: op.id,
      detail: { members: count, params: op.params as Prisma.InputJsonValue },
      requestId: actor.requestId,
    });
    return count;
  });
  return { eval_id: op.id, deleted: true, members };
}

/** The member counts per (true, predicted) cell, read from the stored members, with class names and per-class figures. */
export async function exploreEvalCells(db: Db, id: string) {
  const op = await findEval(db, id);
  const rows = await db.$queryRaw<Array<{ true_class_id: number; pred_class_id: number; n: bigint }>>`
    SELECT true_class_id, pred_class_id, count(*) AS n FROM explore_eval_members
     WHERE eval_id = ${op.id}::uuid GROUP BY 1, 2 ORDER BY 1, 2`;
  const cells = rows.map((r) => ({
    true_class_id: r.true_class_id,
    pred_class_id: r.pred_class_id,
    count: Number(r.n),
  }));
  const names = await classNames(db);
  const classIds = [...new Set(cells.flatMap((c) => [c.true_class_id, c.pred_class_id]))].sort(
    (a, b) => a - b,
  );
  return {
    ...evalOut(op),
    classes: classIds.map((c) => ({ class_id: c, class_name: nameOf(names, c) })),
    cells: namedCells(cells, names),
    per_class: namedFigures(cells, names),
  };
}

/**
 * A cell's row or column as the query names it: a class name, an ontology class id, or
 * `background` (or -1). Unknown ones are a 422 naming the field.
 */
export async function resolveClassLabel(db: Db, label: string, field: string): Promise<number> {
  if (label === 'background' || label === '-1') return BACKGROUND;
  const byId = /^\d{1,9}$/.test(label);
  const cls = await db.ontologyClass.findFirst({
    where: byId ? { id: Number(label) } : { name: label },
    select: { id: true },
  });
  if (!cls)
    throw new InputError(`no ontology class ${JSON.stringify(label)}`, [
      { field, message: 'a class name, a class id, or background' },
    ]);
  return cls.id;
}

export interface PatchesQuery {
  true_class?: string | undefined;
  pred_class?: string | undefined;
  limit: number;
  cursor?: string | undefined;
}

/**
 * The members of one cell (or of a whole row or column when one side is left out), in id order,
 * each with the URL of its crop: the prediction's (`/api/predictions/{id}/crop`) for a match or a
 * false detection, the reference object's (`/api/objects/{id}/crop`) for a miss, and the reference
 * object's as `object_crop_url` beside a match. A reference object deleted since has no crop (null).
 */
export async function exploreEvalPatches(db: Db, id: string, query: PatchesQuery) {
  const op = await findEval(db, id);
  const trueClass =
    query.true_class === undefined
      ? undefined
      : await resolveClassLabel(db, query.true_class, 'query.true_class');
  const predClass =
    query.pred_class === undefined
      ? undefined
      : await resolveClassLabel(db, query.pred_class, 'query.pred_class');
  const rows = await db.exploreEvalMember.findMany({
    where: {
      evalId: op.id,
      ...(trueClass === undefined ? {} : { trueClassId: trueClass }),
      ...(predClass === undefined ? {} : { predClassId: predClass }),
      ...(query.cursor ? { id: { gt: query.cursor } } : {}),
    },
    orderBy: { id: 'asc' },
    take: query.limit + 1,
  });
  const shown = rows.slice(0, query.limit);
  const objectIds = shown.flatMap((m) => (m.objectId ? [m.objectId] : []));
  const live = new Set(
    (await db.annoObject.findMany({ where: { id: { in: objectIds } }, select: { id: true } })).map(
      (o) => o.id,
    ),
  );
  const names = await classNames(db);
  const objectCrop = (objectId: string | null) =>
    objectId && live.has(objectId) ? `/api/objects/${objectId}/crop` : null;
  return {
    eval_id: op.id,
    true_class_id: trueClass ?? null,
    pred_class_id: predClass ?? null,
    items: shown.map((m) => ({
      id: m.id,
      kind:
        m.trueClassId === BACKGROUND
          ? 'false_detection'
          : m.predClassId === BACKGROUND
            ? 'missed'
            : m.trueClassId === m.predClassId
              ? 'match'
              : 'confusion',
      true_class_id: m.trueClassId,
      true_class: nameOf(names, m.trueClassId),
      pred_class_id: m.predClassId,
      pred_class: nameOf(names, m.predClassId),
      frame_id: m.frameId,
      object_id: m.objectId,
      prediction_id: m.predictionId,
      bbox: m.bbox,
      iou: m.iou,
      conf: m.conf,
      crop_url: m.predictionId ? `/api/predictions/${m.predictionId}/crop` : objectCrop(m.objectId),
      object_crop_url: m.predictionId ? objectCrop(m.objectId) : null,
      frame_url: `/api/frames/${m.frameId}/image`,
    })),
    limit: query.limit,
    next_cursor: rows.length > query.limit ? shown[shown.length - 1]!.id : null,
  };
}

import { NotFoundError, RefusedError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import {
  evaluateScope,
  hierarchicalRollUp,
  inScope,
  type ClassEvaluation,
  type ScopeEvaluation,
} from '../../core/evalgov';
import { Prisma, type EvalOperation } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { recordOperation } from '../quality/operations';
import { loadGold, loadPredictions, ontologyRows, parityEpsilon, sliceScopes, usableRun } from './scope';

/**
 * Evaluations of runs against gold (docs/quality-evalgov.md): POST /api/evalgov/evaluate records
 * one `evalgov_evaluate` operation per (run, scope) — the whole gold set and each slice named —
 * and the matrix, hierarchical, pairs and model-evals reads are views over those operations.
 */

export const EVALUATE_OP = 'evalgov_evaluate';
/** Most slices one evaluate request names. */
export const EVAL_MAX_SLICES = 20;
/** Most predictions one evaluate request evaluates over all its scopes (the whole set and each slice). */
export const EVAL_MAX_SCOPED_PREDICTIONS = 300_000;
export const SIGNIFICANCE_OP = 'significance';

export interface EvaluateInput {
  run_id: string;
  gold_id: string;
  slice_ids?: string[] | undefined;
  iou_thr: number;
}

type Named<T> = T & { class_name: string | null };
export type StoredEvaluation = Omit<ScopeEvaluation, 'classes'> & { classes: Named<ClassEvaluation>[] };

export interface EvaluateParams {
  run_id: string;
  gold_id: string;
  model_version: string;
  slice_id: string | null;
  slice_name: string | null;
  iou_thr: number;
  parity_epsilon: number;
  not_applied: string[];
}

/**
 * A run evaluated on a gold set, the whole set and each slice named, without recording anything:
 * what `evaluateRun` records, and what the reproducibility check computes again. `epsilon` is the
 * harness parity tolerance (the configured one for a new evaluation, the stored one for a re-run).
 */
export async function computeEvaluations(db: Db, input: EvaluateInput, epsilon: number) {
  const run = await usableRun(db, input.run_id);
  const { gold, frames, boxes } = await loadGold(db, input.gold_id);
  const [predictions, slices, ontology] = await Promise.all([
    loadPredictions(db, run, gold.frameIds),
    sliceScopes(db, input.slice_ids ?? [], gold.frameIds),
    ontologyRows(db),
  ]);
  const names = new Map(ontology.map((o) => [o.id, o.name]));
  const scopes = [
    { slice_id: null, slice_name: null, frames, boxes, predictions, not_applied: [] as string[] },
    ...slices.map((s) => {
      const kept = new Set(s.scope.frameIds);
      return {
        slice_id: s.slice_id,
        slice_name: s.slice_name,
        frames: frames.filter((f) => kept.has(f.id)),
        boxes: inScope(boxes, s.scope),
        predictions: inScope(predictions, s.scope),
        not_applied: s.not_applied,
      };
    }),
  ];
  const scoped = scopes.reduce((n, s) => n + s.predictions.length, 0);
  if (scoped > EVAL_MAX_SCOPED_PREDICTIONS)
    throw new RefusedError(
      `the whole set and its ${slices.length} slice(s) hold ${scoped} predictions together; one request evaluates at most ${EVAL_MAX_SCOPED_PREDICTIONS} (name fewer slices per request)`,
      { reason: 'too_many_predictions', predictions: scoped, max: EVAL_MAX_SCOPED_PREDICTIONS },
    );
  const evaluated = scopes.map((s) => {
    const e = evaluateScope(s.frames, s.boxes, s.predictions, { iouThr: input.iou_thr, epsilon });
    const result: StoredEvaluation = {
      ...e,
      classes: e.classes.map((c) => ({ ...c, class_name: names.get(c.class_id) ?? null })),
    };
    const params: EvaluateParams = {
      run_id: run.id,
      gold_id: gold.id,
      model_version: run.modelVersion,
      slice_id: s.slice_id,
      slice_name: s.slice_name,
      iou_thr: input.iou_thr,
      parity_epsilon: epsilon,
      not_applied: s.not_applied,
    };
    return { params, result };
  });
  return { run, gold, evaluated };
}

export async function evaluateRun(db: Db, config: object, input: EvaluateInput, actor: Actor) {
  const { run, gold, evaluated } = await computeEvaluations(db, input, parityEpsilon(config));
  // All of one request's operations or none.
  const ops = await db.$transaction(async (tx) => {
    const out: EvalOperation[] = [];
    for (const { params, result } of evaluated)
      out.push(
        await recordOperation(tx, {
          opType: EVALUATE_OP,
          subjectIds: [run.id, gold.id, run.modelVersion, ...(params.slice_id ? [params.slice_id] : [])],
          params,
          result,
          actor,
        }),
      );
    return out;
  });
  return {
    run_id: run.id,
    gold_id: gold.id,
    model_version: run.modelVersion,
    evaluations: evaluated.map(({ params, result }, i) => ({
      operation_id: ops[i]!.id,
      slice_id: params.slice_id,
      slice_name: params.slice_name,
      not_applied: params.not_applied,
      ...result,
    })),
  };
}

/** The headline of a stored evaluation, as the matrix, pairs and model-evals show it. */
function headline(op: { id: string; params: unknown; result: unknown; createdAt: Date }) {
  const p = op.params as EvaluateParams;
  const r = op.result as Partial<StoredEvaluation>;
  return {
    operation_id: op.id,
    run_id: p.run_id,
    gold_id: p.gold_id,
    model_version: p.model_version,
    slice_id: p.slice_id ?? null,
    slice_name: p.slice_name ?? null,
    map: r.map ?? null,
    ap50: r.ap50 ?? null,
    ap75: r.ap75 ?? null,
    ar100: r.ar100 ?? null,
    precision: r.precision ?? null,
    recall: r.recall ?? null,
    iou_thr: p.iou_thr,
    frames: r.frames ?? null,
    gold: r.gold ?? null,
    parity_within: r.parity?.within ?? null,
    parity_max_abs_delta: r.parity?.max_abs_delta ?? null,
    created_at: op.createdAt.toISOString(),
  };
}
export type Headline = ReturnType<typeof headline>;

interface OpRow {
  id: string;
  params: unknown;
  result: unknown;
  created_at: Date;
}

const HEADLINE_COLUMNS = Prisma.sql`id::text, params, created_at,
  jsonb_build_object('map', result->'map', 'ap50', result->'ap50', 'ap75', result->'ap75',
    'ar100', result->'ar100', 'precision', result->'precision', 'recall', result->'recall',
    'frames', result->'frames', 'gold', result->'gold', 'parity', result->'parity') AS result`;

const sliceFilter = (sliceId: string | null | undefined) =>
  sliceId === undefined
    ? Prisma.empty
    : sliceId === null
      ? Prisma.sql`AND params->>'slice_id' IS NULL`
      : Prisma.sql`AND params->>'slice_id' = ${sliceId}`;

/**
 * The latest evaluation of each (gold set, model version, scope), optionally of one gold set, one
 * scope (`null`: the whole gold set) or some model versions.
 */
async function latestEvaluations(
  db: Db,
  filter: {
    gold_id?: string | undefined;
    slice_id?: string | null | undefined;
    model_versions?: string[] | undefined;
  },
) {
  const rows = await db.$queryRaw<OpRow[]>`
    SELECT DISTINCT ON (params->>'gold_id', params->>'model_version', coalesce(params->>'slice_id', ''))
           ${HEADLINE_COLUMNS}
      FROM eval_operations
     WHERE op_type = ${EVALUATE_OP}
       ${filter.gold_id ? Prisma.sql`AND subject_ids @> ARRAY[${filter.gold_id}]::text[]` : Prisma.empty}
       ${filter.model_versions?.length ? Prisma.sql`AND params->>'model_version' = ANY(${filter.model_versions}::text[])` : Prisma.empty}
       ${sliceFilter(filter.slice_id)}
     ORDER BY params->>'gold_id', params->>'model_version', coalesce(params->>'slice_id', ''),
              created_at DESC, id DESC`;
  return rows.map((r) => headline({ id: r.id, params: r.params, result: r.result, createdAt: r.created_at }));
}

/**
 * Model × slice: rows are model versions, columns the whole gold set (`slice_id` null) then each
 * slice evaluated; a cell is the latest evaluation of that model on that scope (of `gold_id` when
 * given: without it, cells of different gold sets may sit side by side, each naming its gold set).
 */
export async function evaluationMatrix(
  db: Db,
  query: { gold_id?: string | undefined; model_versions?: string[] | undefined },
) {
  const all = await latestEvaluations(db, query);
  // Without a gold set named, the latest per (model, scope) across gold sets.
  const latest = new Map<string, Headline>();
  for (const h of all) {
    const key = `${h.model_version}\u0000${h.slice_id ?? ''}`;
    const seen = latest.get(key);
    if (!seen || seen.created_at < h.created_at) latest.set(key, h);
  }
  const cells = [...latest.values()];
  const models = [...new Set(cells.map((c) => c.model_version))].sort();
  const columns = new Map<string, { slice_id: string | null; slice_name: string | null }>();
  for (const c of cells) columns.set(c.slice_id ?? '', { slice_id: c.slice_id, slice_name: c.slice_name });
  const ordered = [...columns.entries()]
    .sort(([a, x], [b, y]) =>
      a === ''
        ? -1
        : b === ''
          ? 1
          : (x.slice_name ?? '').localeCompare(y.slice_name ?? '') || a.localeCompare(b),
    )
    .map(([key, col]) => ({ key, ...col, slice_name: col.slice_id === null ? 'all' : col.slice_name }));
  return {
    gold_id: query.gold_id ?? null,
    columns: ordered.map(({ slice_id, slice_name }) => ({ slice_id, slice_name })),
    rows: models.map((model_version) => ({
      model_version,
      cells: ordered.map(({ key }) => {
        const c = latest.get(`${model_version}\u0000${key}`);
        return c
          ? {
              operation_id: c.operation_id,
              run_id: c.run_id,
              gold_id: c.gold_id,
              map: c.map,
              ap50: c.ap50,
              recall: c.recall,
              ar100: c.ar100,
              parity_within: c.parity_within,
              created_at: c.created_at,
            }
          : null;
      }),
    })),
  };
}

/** One evaluate operation (404 when it is not one). */
export async function findEvaluation(db: Db, id: string): Promise<EvalOperation> {
  const op = await db.evalOperation.findUnique({ where: { id } });
  if (!op || op.opType !== EVALUATE_OP) throw new NotFoundError(`no evaluation operation ${id}`);
  return op;
}

/**
 * An evaluation's per-class figures rolled up by l0 and l1 (micro and macro, core/evalgov/hierarchy):
 * the operation named, or the latest evaluation of a model version (of a gold set, of a scope).
 */
export async function hierarchicalEvaluation(
  db: Db,
  query: {
    operation_id?: string | undefined;
    model_version?: string | undefined;
    gold_id?: string | undefined;
    slice_id?: string | undefined;
  },
) {
  let op: EvalOperation;
  if (query.operation_id) op = await findEvaluation(db, query.operation_id);
  else {
    const subjects = [query.model_version!, ...(query.gold_id ? [query.gold_id] : [])];
    const rows = await db.$queryRaw<Array<{ id: string }>>`
      SELECT id::text FROM eval_operations
       WHERE op_type = ${EVALUATE_OP} AND subject_ids @> ${subjects}::text[]
         AND params->>'model_version' = ${query.model_version!}
         ${sliceFilter(query.slice_id ?? null)}
       ORDER BY created_at DESC, id DESC LIMIT 1`;
    if (!rows[0])
      throw new NotFoundError(
        `model ${query.model_version} has no evaluation${query.gold_id ? ` on gold set ${query.gold_id}` : ''}${query.slice_id ? ` of slice ${query.slice_id}` : ''}`,
      );
    op = await findEvaluation(db, rows[0].id);
  }
  const result = op.result as unknown as StoredEvaluation;
  const rolled = hierarchicalRollUp(result.classes, await ontologyRows(db));
  return {
    ...headline(op),
    average: {
      micro: 'counts at iou_thr summed over the group, then precision and recall',
      macro: 'per-class figures averaged over the classes of the group with gold boxes',
    },
    l0: rolled.l0,
    l1: rolled.l1,
    classes: result.classes,
  };
}

interface SignificanceRow {
  id: string;
  params: {
    run_a: string;
    run_b: string;
    model_a: string;
    model_b: string;
    gold_id: string;
    slice_id: string | null;
  };
  result: {
    map_difference?: { estimate: number | null; lo: number | null; hi: number | null };
    paired?: { permutation?: { p_value: number } };
    verdict?: { better_by_map: 'a' | 'b' | null; better_by_frame_f1: 'a' | 'b' | null };
  };
  created_at: Date;
}

const pairKey = (gold: string, slice: string | null, m1: string, m2: string) =>
  [gold, slice ?? '', ...[m1, m2].sort()].join('\u0000');

/**
 * Champion/challenger pairs: every two model versions whose latest evaluations share a gold set
 * and scope. The champion is the incumbent — the model evaluated there first — and the challenger
 * the later one; deltas are challenger − champion. Each pair carries the latest significance
 * result between the two models on that gold set and scope, when one was computed.
 */
export async function evaluationPairs(
  db: Db,
  query: {
    gold_id?: string | undefined;
    slice_id?: string | undefined;
    model_version?: string | undefined;
    limit: number;
    offset: number;
  },
) {
  const latest = await latestEvaluations(db, {
    gold_id: query.gold_id,
    ...(query.slice_id === undefined ? {} : { slice_id: query.slice_id === 'all' ? null : query.slice_id }),
  });
  const groups = new Map<string, Headline[]>();
  for (const h of latest) {
    const key = `${h.gold_id}\u0000${h.slice_id ?? ''}`;
    const list = groups.get(key);
    if (list) list.push(h);
    else groups.set(key, [h]);
  }
  const pairs: Array<{ champion: Headline; challenger: Headline }> = [];
  for (const [, members] of [...groups].sort(([a], [b]) => (a < b ? -1 : 1))) {
    members.sort((x, y) => (x.created_at < y.created_at ? -1 : x.created_at > y.created_at ? 1 : 0));
    for (let i = 0; i < members.length; i++)
      for (let j = i + 1; j < members.length; j++) {
        const [champion, challenger] = [members[i]!, members[j]!];
        if (
          query.model_version &&
          ![champion.model_version, challenger.model_version].includes(query.model_version)
        )
          continue;
        pairs.push({ champion, challenger });
      }
  }
  const page = pairs.slice(query.offset, query.offset + query.limit);
  const goldIds = [...new Set(page.map((p) => p.champion.gold_id))];
  const significance = new Map<string, SignificanceRow>();
  if (goldIds.length) {
    const rows = await db.$queryRaw<SignificanceRow[]>`
      SELECT id::text, params, jsonb_build_object('map_difference', result->'map_difference',
               'paired', jsonb_build_object('permutation', result->'paired'->'permutation'),
               'verdict', result->'verdict') AS result, created_at
        FROM eval_operations
       WHERE op_type = ${SIGNIFICANCE_OP} AND params->>'gold_id' = ANY(${goldIds}::text[])
       ORDER BY created_at DESC, id DESC`;
    for (const r of rows) {
      const key = pairKey(r.params.gold_id, r.params.slice_id ?? null, r.params.model_a, r.params.model_b);
      if (!significance.has(key)) significance.set(key, r);
    }
  }
  const delta = (a: number | null, b: number | null) => (a === null || b === null ? null : b - a);
  return {
    items: page.map(({ champion, challenger }) => {
      const s = significance.get(
        pairKey(champion.gold_id, champion.slice_id, champion.model_version, challenger.model_version),
      );
      const modelOf = (side: 'a' | 'b' | null | undefined) =>
        side === 'a' ? s!.params.model_a : side === 'b' ? s!.params.model_b : null;
      return {
        gold_id: champion.gold_id,
        slice_id: champion.slice_id,
        slice_name: champion.slice_name,
        champion,
        challenger,
        delta: {
          map: delta(champion.map, challenger.map),
          ap50: delta(champion.ap50, challenger.ap50),
          ap75: delta(champion.ap75, challenger.ap75),
          ar100: delta(champion.ar100, challenger.ar100),
          precision: delta(champion.precision, challenger.precision),
          recall: delta(champion.recall, challenger.recall),
        },
        significance: s
          ? {
              operation_id: s.id,
              run_a: s.params.run_a,
              run_b: s.params.run_b,
              model_a: s.params.model_a,
              model_b: s.params.model_b,
              map_difference: s.result.map_difference ?? null,
              p_value: s.result.paired?.permutation?.p_value ?? null,
              better_by_map: modelOf(s.result.verdict?.better_by_map),
              better_by_frame_f1: modelOf(s.result.verdict?.better_by_frame_f1),
              created_at: s.created_at.toISOString(),
            }
          : null,
      };
    }),
    total: pairs.length,
    limit: query.limit,
    offset: query.offset,
    next_offset: query.offset + query.limit < pairs.length ? query.offset + query.limit : null,
  };
}

/** A model's evaluations, newest first (404 when the model is neither registered nor evaluated). */
export async function modelEvaluations(
  db: Db,
  modelVersion: string,
  query: { gold_id?: string | undefined; limit: number; cursor?: string | undefined },
) {
  const where: Prisma.EvalOperationWhereInput = {
    opType: EVALUATE_OP,
    subjectIds: { hasEvery: [modelVersion, ...(query.gold_id ? [query.gold_id] : [])] },
    params: { path: ['model_version'], equals: modelVersion },
  };
  const rows = await db.evalOperation.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  if (!rows.length && !query.cursor) {
    const known = await db.model.findUnique({ where: { modelVersion }, select: { id: true } });
    if (!known) throw new NotFoundError(`no model ${modelVersion} is registered or evaluated`);
  }
  const { page, next_cursor } = idPage(rows, query.limit);
  return {
    model_version: modelVersion,
    items: page.map(headline),
    next_cursor,
  };
}

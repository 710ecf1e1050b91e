import { createHash } from 'node:crypto';
import { InputError, RefusedError } from '../../core/errors';
import { compareRuns, inScope, matchRun } from '../../core/evalgov';
import { bootstrapInterval } from '../../core/quality/stats';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { recordOperation } from '../quality/operations';
import { SIGNIFICANCE_OP } from './evaluate';
import { loadGold, loadPredictions, oneSliceScope, usableRun } from './scope';

/**
 * The statistics routes (docs/quality-evalgov.md): a seeded bootstrap interval of a mean
 * (BootstrapIn) and the paired significance test between two runs on one gold set.
 */

export const BOOTSTRAP_OP = 'bootstrap';

/**
 * Most values one bootstrap takes, and most value draws (values × n_boot) one request may make:
 * 2·10⁷ draws take about a second.
 */
export const BOOTSTRAP_MAX_VALUES = 100_000;
export const BOOTSTRAP_MAX_DRAWS = 20_000_000;
/** Values kept verbatim in the operation's params up to this many (beyond: their count and hash). */
const KEEP_VALUES = 1000;

/**
 * Most work one significance test does in a request, counted as (predictions of both runs) ×
 * n_boot + frames × (n_boot + n_perm): every resample re-weights every prediction for the mAP
 * difference, and the per-frame tests resample and flip every frame. 5·10⁷ is a few seconds.
 */
export const SIGNIFICANCE_MAX_WORK = 50_000_000;

export async function bootstrapValues(
  db: Db,
  input: { values: number[]; alpha: number; n_boot: number; seed: number },
  actor: Actor,
) {
  const draws = input.values.length * input.n_boot;
  if (draws > BOOTSTRAP_MAX_DRAWS)
    throw new InputError(
      `${input.values.length} values × ${input.n_boot} resamples is ${draws} draws; one request makes at most ${BOOTSTRAP_MAX_DRAWS} (lower n_boot)`,
      [{ field: 'body.n_boot', message: `values × n_boot must not exceed ${BOOTSTRAP_MAX_DRAWS}` }],
    );
  const interval = bootstrapInterval(input.values, {
    alpha: input.alpha,
    nBoot: input.n_boot,
    seed: input.seed,
  });
  const sha = createHash('sha256').update(Float64Array.from(input.values)).digest('hex');
  const op = await recordOperation(db, {
    opType: BOOTSTRAP_OP,
    subjectIds: [`values:${sha}`],
    params: {
      n: input.values.length,
      values_sha256: sha,
      ...(input.values.length <= KEEP_VALUES ? { values: input.values } : {}),
      alpha: input.alpha,
      n_boot: input.n_boot,
      seed: input.seed,
    },
    result: interval,
    actor,
  });
  return { operation_id: op.id, statistic: 'mean', method: 'percentile', ...interval };
}

export interface SignificanceInput {
  run_a: string;
  run_b: string;
  gold_id: string;
  slice_id?: string | undefined;
  iou_thr: number;
  conf_thr: number;
  alpha: number;
  n_boot: number;
  seed: number;
  n_perm: number;
}

/** Paired significance between two runs on a gold set (or one slice of it), recorded as an operation. */
export async function significance(db: Db, input: SignificanceInput, actor: Actor) {
  if (input.run_a === input.run_b)
    throw new InputError('run_a and run_b are the same run', [
      { field: 'body.run_b', message: 'must differ from run_a' },
    ]);
  const runA = await usableRun(db, input.run_a, 'run_a');
  const runB = await usableRun(db, input.run_b, 'run_b');
  const { gold, boxes } = await loadGold(db, input.gold_id);
  const [predsA, predsB, { slice, scope, sliceParams }] = await Promise.all([
    loadPredictions(db, runA, gold.frameIds),
    loadPredictions(db, runB, gold.frameIds),
    oneSliceScope(db, input.slice_id, gold.frameIds),
  ]);
  if (!scope.frameIds.length)
    throw new RefusedError(
      `slice ${slice?.slice_id} selects no frame of gold set ${gold.id}: nothing to compare`,
      {
        reason: 'empty_scope',
      },
    );
  const goldIn = inScope(boxes, scope);
  const inA = inScope(predsA, scope);
  const inB = inScope(predsB, scope);
  const frames = scope.frameIds.length;
  const work = (inA.length + inB.length) * input.n_boot + frames * (input.n_boot + input.n_perm);
  if (work > SIGNIFICANCE_MAX_WORK)
    throw new InputError(
      `${inA.length + inB.length} predictions on ${frames} frames with n_boot ${input.n_boot} and n_perm ${input.n_perm} is more than one request computes (${work} > ${SIGNIFICANCE_MAX_WORK}: lower n_boot or n_perm, or compare on a slice)`,
      [{ field: 'body.n_boot', message: 'too many resamples for these runs' }],
    );
  const matchA = matchRun(goldIn, inA, scope.frameIds, input.iou_thr);
  const matchB = matchRun(goldIn, inB, scope.frameIds, input.iou_thr);
  const result = compareRuns(matchA, matchB, {
    confThr: input.conf_thr,
    alpha: input.alpha,
    nBoot: input.n_boot,
    seed: input.seed,
    nPerm: input.n_perm,
  });
  const params = {
    run_a: runA.id,
    run_b: runB.id,
    model_a: runA.modelVersion,
    model_b: runB.modelVersion,
    gold_id: gold.id,
    ...sliceParams,
    iou_thr: input.iou_thr,
    conf_thr: input.conf_thr,
    alpha: input.alpha,
    n_boot: input.n_boot,
    seed: input.seed,
    n_perm: input.n_perm,
  };
  const op = await recordOperation(db, {
    opType: SIGNIFICANCE_OP,
    subjectIds: [
      runA.id,
      runB.id,
      gold.id,
      runA.modelVersion,
      runB.modelVersion,
      ...(slice ? [slice.slice_id] : []),
    ],
    params,
    result,
    actor,
  });
  const better = (side: 'a' | 'b' | null) => (side === 'a' ? runA.id : side === 'b' ? runB.id : null);
  return {
    operation_id: op.id,
    ...params,
    ...result,
    better_run_by_map: better(result.verdict.better_by_map),
    better_run_by_frame_f1: better(result.verdict.better_by_frame_f1),
  };
}

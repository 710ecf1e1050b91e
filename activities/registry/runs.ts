import { ConflictError, RefusedError } from '../../core/errors';
import type { InferenceRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { EVALUATE_OP } from '../evalgov/evaluate';
import { findRun, inferenceRunWorkflowId, queueGpuRun } from '../quality/inference-runs';

/**
 * The inference run a model version is judged by on a gold set: the one the caller names, else its
 * latest evidence there (completedGoldRun: a model file and a sealed gold set never change, so its
 * predictions still hold), else a new GPU run queued for its workflow.
 */
export interface GoldRun {
  runId: string;
  modelVersion: string;
  /** A completed run reused: nothing to start. */
  reused: boolean;
  reconstructed: boolean;
  /** The workflow to start for a queued run (`inference-run-<id>`); null when reused. */
  workflowId: string | null;
}

const planned = (run: InferenceRun, reused: boolean): GoldRun => ({
  runId: run.id,
  modelVersion: run.modelVersion,
  reused,
  reconstructed: run.reconstructed,
  workflowId: reused ? null : inferenceRunWorkflowId(run.id),
});

/**
 * A run the caller names for a model: it exists (404), is that model's (422) and is completed
 * (409). A reconstructed run is returned as it is: the gate refuses it by its own rule.
 */
export async function namedRun(
  db: Db,
  runId: string,
  modelVersion: string,
  field: string,
): Promise<InferenceRun> {
  const run = await findRun(db, runId);
  if (run.modelVersion !== modelVersion)
    throw new RefusedError(
      `inference run ${run.id} (${field}) is a run of ${run.modelVersion}, not of ${modelVersion}`,
      {
        reason: 'other_model',
        field,
      },
    );
  if (run.status !== 'completed')
    throw new ConflictError(`inference run ${run.id} (${field}) is ${run.status}, not completed`);
  return run;
}

/**
 * The latest completed, non-reconstructed run of a model version that is its evidence on a gold
 * set: a GPU run over that gold set, or any run with a whole-set evaluation recorded on it (by the
 * gate, the champion sweep, POST /api/govern/registry/register_run or /api/evalgov/evaluate).
 */
export async function completedGoldRun(
  db: Db,
  modelVersion: string,
  goldId: string,
): Promise<InferenceRun | null> {
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT r.id::text FROM inference_runs r
     WHERE r.model_version = ${modelVersion} AND r.status = 'completed' AND NOT r.reconstructed
       AND (r.scope->>'gold_id' = ${goldId}
            OR EXISTS (SELECT 1 FROM eval_operations o
                        WHERE o.op_type = ${EVALUATE_OP} AND o.subject_ids @> ARRAY[r.id::text, ${goldId}]
                          AND o.params->>'slice_id' IS NULL))
     ORDER BY r.finished_at DESC NULLS LAST, r.id DESC LIMIT 1`;
  return rows[0] ? db.inferenceRun.findUnique({ where: { id: rows[0].id } }) : null;
}

export async function runOnGold(
  db: Db,
  input: { modelVersion: string; goldId: string; runId?: string | null | undefined; field: string },
  actor: Actor,
): Promise<GoldRun> {
  if (input.runId) return planned(await namedRun(db, input.runId, input.modelVersion, input.field), true);
  const done = await completedGoldRun(db, input.modelVersion, input.goldId);
  if (done) return planned(done, true);
  return planned(await queueGpuRun(db, { gold_id: input.goldId }, actor, input.modelVersion), false);
}

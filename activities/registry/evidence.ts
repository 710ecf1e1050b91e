import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { ActivityDeps } from '../deps';
import { usableRun } from '../evalgov/scope';
import { findModel } from '../models/artifacts';
import { classNames, evaluateRunOnGold, recordGoldEvaluation, safetyClasses } from './evaluation';
import { registryModelOut } from './models';

/**
 * POST /api/govern/registry/register_run: an inference run registered as its model version's
 * evidence on a gold set. The run — a GPU run over other frames, or an external model's imported
 * predictions — is evaluated on the whole gold set with the gate's evaluator and judged against the
 * safety floors, and the evaluation is recorded: from then on the registry shows it among the
 * version's evaluations, and the gate and the champion sweep reuse the run there instead of
 * running the model again. The run must be completed (409) and not reconstructed (422); its model
 * version must be registered (404).
 */
export async function registerRunEvidence(
  deps: Pick<ActivityDeps, 'db' | 'config'>,
  input: { run_id: string; gold_id: string },
  actor: Actor,
) {
  const { db, config } = deps;
  const run = await usableRun(db, input.run_id);
  const model = await findModel(db, run.modelVersion);
  const shared = { names: await classNames(db), safety: await safetyClasses(db, config) };
  const { gold, evaluation, safety } = await evaluateRunOnGold(db, config, run, input.gold_id, shared);
  const op = await db.$transaction(async (tx) => {
    const recorded = await recordGoldEvaluation(tx, evaluation, actor);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'model.register_run',
      subjectType: 'model',
      subjectId: model.id,
      detail: {
        model_version: model.modelVersion,
        run_id: run.id,
        gold_id: gold.id,
        operation_id: recorded.id,
      },
      requestId: actor.requestId,
    });
    return recorded;
  });
  const e = evaluation.result;
  return {
    model: registryModelOut(model),
    run_id: run.id,
    gold_id: gold.id,
    operation_id: op.id,
    evaluation: {
      frames: e.frames,
      gold: e.gold,
      map: e.map,
      ap50: e.ap50,
      ar100: e.ar100,
      precision: e.precision,
      recall: e.recall,
      parity: e.parity,
      classes: e.classes,
    },
    safety,
  };
}

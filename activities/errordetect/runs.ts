import { ApplicationFailure } from '@temporalio/activity';
import { DomainError, NotFoundError, ConflictError, RefusedError } from '../../core/errors';
import {
  DEFAULT_ERROR_DETECTION_OPTIONS,
  ERROR_KINDS,
  findErrorCandidates,
  type LabelledObject,
  type ModelPrediction,
  type ErrorDetectionOptions,
  type ErrorKind,
} from '../../core/errordetect';
import type { Box } from '../../core/geometry';
import { Prisma, type ErrorRun } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import type { Db } from '../db';
import { checkScope, findRun, queueGpuRun, scopeFrames, type RunScope } from '../quality/inference-runs';
import { recordOperation } from '../quality/operations';

/**
 * Label-error detection runs (docs/quality-errordetect.md): an ErrorRun names a scope of frames
 * and the inference run whose predictions are weighed against the frames' labels; workflow
 * `errordetect-<id>` gets the predictions (a GPU run when none is named), then finds the
 * candidates and stores them with the run's summary in one transaction.
 */

/** Detector options as the API names them (snake_case), beside the core's names. */
export const OPTION_NAMES = {
  match_iou: 'matchIou',
  duplicate_iou: 'duplicateIou',
  missing_min_conf: 'missingMinConf',
  missing_max_iou: 'missingMaxIou',
  bad_box_min_conf: 'badBoxMinConf',
  bad_box_max_iou: 'badBoxMaxIou',
  min_class_support: 'minClassSupport',
} as const satisfies Record<string, keyof ErrorDetectionOptions>;

export type ApiOptionName = keyof typeof OPTION_NAMES;
export type ApiDetectorOptions = Record<ApiOptionName, number>;

export const DEFAULT_API_OPTIONS = Object.fromEntries(
  Object.entries(OPTION_NAMES).map(([api, core]) => [api, DEFAULT_ERROR_DETECTION_OPTIONS[core]]),
) as ApiDetectorOptions;

export const toCoreOptions = (o: ApiDetectorOptions): ErrorDetectionOptions =>
  Object.fromEntries(
    Object.entries(OPTION_NAMES).map(([api, core]) => [core, o[api as ApiOptionName]]),
  ) as unknown as ErrorDetectionOptions;

/** The op_type of the eval operation each completed detection records. */
export const ERRORDETECT_OPERATION = 'errordetect_run';

export const errorDetectWorkflowId = (errorRunId: string) => `errordetect-${errorRunId}`;

/** How many ids one `IN (...)` list carries (PostgreSQL takes at most 65,535 bind parameters). */
const ID_CHUNK = 5000;

export function chunks<T>(items: readonly T[], size = ID_CHUNK): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export const errorRunOut = (r: ErrorRun) => ({
  id: r.id,
  status: r.status,
  scope: r.scope,
  run_id: r.runId,
  options: r.options,
  summary: r.summary,
  workflow_id: r.workflowId,
  error: r.error,
  created_by: r.createdBy,
  created_at: r.createdAt.toISOString(),
  finished_at: r.finishedAt?.toISOString() ?? null,
});

export async function findErrorRun(db: Db, id: string): Promise<ErrorRun> {
  const run = await db.errorRun.findUnique({ where: { id } });
  if (!run) throw new NotFoundError(`no error-detection run ${id}`);
  return run;
}

export interface ErrorRunInput extends RunScope {
  run_id?: string | undefined;
  options: ApiDetectorOptions;
}

/** Whether an inference run has at least one prediction on the frames. */
async function predictsOn(db: Db, runId: string, frameIds: readonly string[]): Promise<boolean> {
  for (const ids of chunks(frameIds)) {
    const hit = await db.prediction.findFirst({
      where: { runId, frameId: { in: ids } },
      select: { id: true },
    });
    if (hit) return true;
  }
  return false;
}

/**
 * Checks what a detection needs and queues it: the scope must name existing frames (422/404), a
 * named run must exist (404), be completed (409), carry confidences (a reconstructed run: 422) and
 * predict on at least one of the scope's frames (422). The options are checked by the core's own
 * rules. Nothing is written unless all of that holds.
 */
export async function queueErrorRun(db: Db, input: ErrorRunInput, actor: Actor): Promise<ErrorRun> {
  // The core validates the options (the route's schema already did; this is the same rule set).
  findErrorCandidates([], toCoreOptions(input.options));
  const scope: RunScope = {
    ...(input.session_id ? { session_id: input.session_id } : {}),
    ...(input.frame_ids ? { frame_ids: input.frame_ids } : {}),
    ...(input.gold_id ? { gold_id: input.gold_id } : {}),
    ...(input.limit ? { limit: input.limit } : {}),
  };
  await checkScope(db, scope);
  if (input.run_id) {
    const run = await findRun(db, input.run_id);
    if (run.reconstructed)
      throw new RefusedError(
        `inference run ${run.id} is reconstructed from history: its confidences are null, and label-error detection weighs the model's confidences`,
        { reason: 'reconstructed' },
      );
    if (run.status !== 'completed')
      throw new ConflictError(`inference run ${run.id} is ${run.status}, not completed`);
    const frames = await scopeFrames(db, scope);
    if (
      !(await predictsOn(
        db,
        run.id,
        frames.map((f) => f.id),
      ))
    )
      throw new RefusedError(`inference run ${run.id} has no prediction on the scope's frames`, {
        reason: 'no_predictions_in_scope',
      });
  }
  return db.$transaction(async (tx) => {
    const created = await tx.errorRun.create({
      data: {
        scope: scope as Prisma.InputJsonValue,
        runId: input.run_id ?? null,
        options: input.options,
        status: 'queued',
        createdBy: actor.userId,
      },
    });
    const run = await tx.errorRun.update({
      where: { id: created.id },
      data: { workflowId: errorDetectWorkflowId(created.id) },
    });
    return run;
  });
}

/** A run whose workflow never started leaves no row behind. */
export async function discardErrorRun(db: Db, id: string): Promise<void> {
  await db.errorRun.deleteMany({ where: { id, status: 'queued' } });
}

/** A refusal that retrying cannot change. */
const refuse = (message: string) => ApplicationFailure.nonRetryable(message, 'ErrorDetectRefused');

/** Domain errors of the store are refusals to the workflow; anything else (a database hiccup) retries. */
async function refusingDomainErrors<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof DomainError) throw refuse(err.message);
    throw err;
  }
}

/** The labels of a frame as error detection reads them (docs/quality-errordetect.md, Labels). */
export interface LoadedLabel {
  id: string;
  frameId: string;
  classId: number;
  bbox: number[];
  version: number;
}

/**
 * The labels of the scope: every object on its frames that is not `rejected` (a rejected object is
 * a person's verdict that nothing is there) and that is a box (an object carrying a polyline, a lane
 * or a curb, only has an enclosing box, which says nothing a detector's box can be compared with).
 */
async function loadLabels(db: Db, frameIds: readonly string[]): Promise<LoadedLabel[]> {
  const out: LoadedLabel[] = [];
  for (const ids of chunks(frameIds)) {
    const rows = await db.annoObject.findMany({
      where: { frameId: { in: ids }, state: { not: 'rejected' }, polyline: { equals: Prisma.AnyNull } },
      select: { id: true, frameId: true, classId: true, bbox: true, version: true },
      orderBy: [{ frameId: 'asc' }, { createdAt: 'asc' }, { id: 'asc' }],
    });
    out.push(...rows.filter((r) => r.bbox.length === 4));
  }
  return out;
}

export interface ErrorRunSummary {
  model_version: string;
  run_id: string;
  frames: number;
  labels: number;
  predictions: number;
  matched_labels: number;
  candidates: number;
  counts: Record<ErrorKind, number>;
  class_thresholds: Array<{
    class_id: number;
    class_name: string | null;
    threshold: number | null;
    support: number;
  }>;
  confident_joint: Array<{ given_class_id: number; confident_class_id: number; count: number }>;
}

/** The `cpu` activities of workflow `errordetect-<id>`. */
export function createErrorRunActivities(db: Db) {
  return {
    /**
     * Says where the predictions come from. With a named run: detection is next (status
     * `detecting`). Without: a GPU inference run over the scope is queued, linked to the error run
     * and its workflow id returned for the child workflow (status `predicting`). Idempotent: a retry
     * finds the run it linked before.
     */
    async prepareErrorRun(input: {
      errorRunId: string;
    }): Promise<{ runId: string; predict: boolean; childWorkflowId: string }> {
      return refusingDomainErrors(async () => {
        const er = await findErrorRun(db, input.errorRunId);
        if (er.status === 'completed' || er.status === 'failed')
          throw refuse(`error-detection run ${er.id} is already ${er.status}`);
        let runId = er.runId;
        if (!runId) {
          const run = await queueGpuRun(db, er.scope as RunScope, {
            userId: er.createdBy as string,
            role: 'reviewer',
            requestId: er.workflowId ?? errorDetectWorkflowId(er.id),
          });
          const linked = await db.errorRun.updateMany({
            where: { id: er.id, runId: null },
            data: { runId: run.id },
          });
          if (linked.count === 0) {
            // A racing attempt linked its own run first: keep that one.
            await db.inferenceRun.delete({ where: { id: run.id } });
            runId = (await findErrorRun(db, er.id)).runId!;
          } else runId = run.id;
        }
        const run = await findRun(db, runId);
        if (run.status === 'failed') throw refuse(`inference run ${run.id} has failed: ${run.error}`);
        const predict = run.status !== 'completed';
        await db.errorRun.update({
          where: { id: er.id },
          data: { status: predict ? 'predicting' : 'detecting', error: null },
        });
        return { runId: run.id, predict, childWorkflowId: run.workflowId ?? `inference-run-${run.id}` };
      });
    },

    /**
     * Loads the scope's labels and the run's predictions on its frames, finds the candidates and
     * stores them, the summary, the completed status and the eval operation in one transaction. A
     * retry after a commit answers the stored summary.
     */
    async detectErrors(input: { errorRunId: string }): Promise<ErrorRunSummary> {
      return refusingDomainErrors(async () => {
        let er = await findErrorRun(db, input.errorRunId);
        if (er.status === 'completed') return er.summary as unknown as ErrorRunSummary;
        if (er.status === 'failed') throw refuse(`error-detection run ${er.id} has failed: ${er.error}`);
        if (!er.runId) throw refuse(`error-detection run ${er.id} has no inference run`);
        er = await db.errorRun.update({ where: { id: er.id }, data: { status: 'detecting' } });
        const run = await findRun(db, er.runId!);
        if (run.reconstructed)
          throw refuse(`inference run ${run.id} is reconstructed from history: its confidences are null`);
        if (run.status !== 'completed')
          throw refuse(`inference run ${run.id} is ${run.status}, not completed`);

        const frames = await scopeFrames(db, er.scope as RunScope);
        const frameIds = frames.map((f) => f.id);
        const labels = await loadLabels(db, frameIds);
        const predictions = [];
        for (const ids of chunks(frameIds))
          predictions.push(
            ...(
              await db.prediction.findMany({
                where: { runId: run.id, frameId: { in: ids } },
                select: { id: true, frameId: true, classId: true, conf: true, bbox: true, probs: true },
                orderBy: [{ frameId: 'asc' }, { id: 'asc' }],
              })
            ).filter((p) => p.bbox.length === 4),
          );

        const byFrame = new Map(
          frames.map((f) => [
            f.id,
            {
              frame_id: f.id,
              width: f.width,
              height: f.height,
              labels: [] as LabelledObject[],
              predictions: [] as ModelPrediction[],
            },
          ]),
        );
        for (const l of labels)
          byFrame.get(l.frameId)!.labels.push({ object_id: l.id, class_id: l.classId, bbox: l.bbox as Box });
        for (const p of predictions) {
          const probs = p.probs && typeof p.probs === 'object' && !Array.isArray(p.probs) ? p.probs : null;
          byFrame.get(p.frameId)!.predictions.push({
            prediction_id: p.id,
            class_id: p.classId,
            conf: p.conf ?? 0,
            bbox: p.bbox as Box,
            ...(probs ? { probs: probs as Record<number, number> } : {}),
          });
        }
        const options = toCoreOptions(er.options as ApiDetectorOptions);
        const result = findErrorCandidates([...byFrame.values()], options);

        const versionOf = new Map(labels.map((l) => [l.id, l.version]));
        const classIds = new Set<number>(result.class_thresholds.map((t) => t.class_id));
        for (const c of result.candidates) if ('class_id' in c.proposed) classIds.add(c.proposed.class_id);
        const nameOf = new Map(
          (
            await db.ontologyClass.findMany({
              where: { id: { in: [...classIds] } },
              select: { id: true, name: true },
            })
          ).map((c) => [c.id, c.name]),
        );
        const counts = Object.fromEntries(ERROR_KINDS.map((k) => [k, 0])) as Record<ErrorKind, number>;
        for (const c of result.candidates) counts[c.kind]++;
        const summary: ErrorRunSummary = {
          model_version: run.modelVersion,
          run_id: run.id,
          frames: frames.length,
          labels: result.labels,
          predictions: result.predictions,
          matched_labels: result.matched_labels,
          candidates: result.candidates.length,
          counts,
          class_thresholds: result.class_thresholds.map((t) => ({
            ...t,
            class_name: nameOf.get(t.class_id) ?? null,
          })),
          confident_joint: result.confident_joint,
        };
        const rows: Prisma.ErrorCandidateCreateManyInput[] = result.candidates.map((c) => ({
          errorRunId: er.id,
          kind: c.kind,
          frameId: c.frame_id,
          objectIds: c.object_ids,
          predictionId: c.prediction_id ?? null,
          score: c.score,
          proposed: ('class_id' in c.proposed
            ? { ...c.proposed, class_name: nameOf.get(c.proposed.class_id) ?? null }
            : c.proposed) as Prisma.InputJsonValue,
          // The versions the labels had when they were judged: confirming refuses once one moved.
          evidence: {
            ...c.evidence,
            object_versions: Object.fromEntries(c.object_ids.map((id) => [id, versionOf.get(id)!])),
          } as Prisma.InputJsonValue,
        }));
        await db.$transaction(
          async (tx) => {
            const done = await tx.errorRun.updateMany({
              where: { id: er.id, status: 'detecting' },
              data: {
                status: 'completed',
                summary: summary as unknown as Prisma.InputJsonValue,
                finishedAt: new Date(),
                error: null,
              },
            });
            if (done.count === 0) throw new ConflictError(`error-detection run ${er.id} changed meanwhile`);
            await tx.errorCandidate.deleteMany({ where: { errorRunId: er.id } });
            for (const part of chunks(rows)) await tx.errorCandidate.createMany({ data: part });
            const scope = er.scope as RunScope;
            await recordOperation(tx, {
              opType: ERRORDETECT_OPERATION,
              subjectIds: [
                er.id,
                run.id,
                run.modelVersion,
                ...(scope.session_id ? [scope.session_id] : []),
                ...(scope.gold_id ? [scope.gold_id] : []),
              ],
              params: { scope, run_id: run.id, options: er.options as object },
              result: summary,
              actor: er.createdBy ? { userId: er.createdBy, role: 'reviewer', requestId: '' } : null,
            });
          },
          { timeout: 120_000 },
        );
        return summary;
      });
    },

    /** The workflow's failure report: the run is failed with the reason (unless it completed). */
    async failErrorRun(input: { errorRunId: string; error: string }): Promise<void> {
      await db.errorRun.updateMany({
        where: { id: input.errorRunId, status: { notIn: ['completed', 'failed'] } },
        data: { status: 'failed', error: input.error.slice(0, 4000), finishedAt: new Date() },
      });
    },
  };
}

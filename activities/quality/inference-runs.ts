import { randomUUID } from 'node:crypto';
import { ApplicationFailure, Context } from '@temporalio/activity';
import { ConflictError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import { clipBox } from '../../core/geometry';
import { goldOrigin, isMachineSource, type FirstReview } from '../../core/quality/gold';
import type { InferenceRun, Prisma } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { releaseSlot, takeSlot } from '../autolabel/slot';
import type { Db } from '../db';
import type { ActivityDeps } from '../deps';
import {
  loadClosedSetDetector,
  residentClosedSetDetector,
  type ClosedSetDetector,
} from '../detect/closed-set';
import { decodeFrame } from '../detect/frame-image';
import { objectLocation, readObject } from '../inspector/frame-objects';
import { readModelArtifact } from '../models/artifacts';
import { classIdsOf, ensureBuiltinModel, findModel } from './models';
import { refusedAs } from '../refusal';

/**
 * The prediction plane (docs/quality.md): an inference run is a model's predictions over a set of
 * frames — run here on the GPU slot, imported from an external model, or reconstructed from the
 * review history (null confidences: refused AP evaluation and promotion).
 */

/** Most predictions one import may carry, and most frames one run may cover. */
export const IMPORT_MAX_PREDICTIONS = 50_000;
export const RUN_MAX_FRAMES = 20_000;

export const runOut = (r: InferenceRun) => ({
  id: r.id,
  model_version: r.modelVersion,
  origin: r.origin,
  reconstructed: r.reconstructed,
  status: r.status,
  scope: r.scope,
  session_id: r.sessionId,
  frames_planned: r.framesPlanned,
  frames_done: r.framesDone,
  n_predictions: r.nPredictions,
  error: r.error,
  workflow_id: r.workflowId,
  created_at: r.createdAt.toISOString(),
  started_at: r.startedAt?.toISOString() ?? null,
  finished_at: r.finishedAt?.toISOString() ?? null,
});

export async function findRun(db: Db, id: string): Promise<InferenceRun> {
  const run = await db.inferenceRun.findUnique({ where: { id } });
  if (!run) throw new NotFoundError(`no inference run ${id}`);
  return run;
}

/**
 * A run AP evaluation against gold may read (the gold measure, harness parity): it exists (404), is
 * not reconstructed (422 naming the reason `reconstructed`: its confidences are null), and has
 * completed (409).
 */
export async function measurableRun(db: Db, id: string): Promise<InferenceRun> {
  const run = await findRun(db, id);
  if (run.reconstructed)
    throw new RefusedError(
      `inference run ${run.id} is reconstructed (null confidences): AP evaluation is refused`,
      { reason: 'reconstructed' },
    );
  if (run.status !== 'completed')
    throw new ConflictError(`inference run ${run.id} is ${run.status}, not completed`);
  return run;
}

export interface RunScope {
  session_id?: string | undefined;
  frame_ids?: string[] | undefined;
  gold_id?: string | undefined;
  limit?: number | undefined;
}

/** The frames of a scope, in a fixed order (session, index, id) so a resumed run continues where it stopped. */
export async function scopeFrames(db: Db, scope: RunScope) {
  const where: Prisma.FrameWhereInput = {};
  if (scope.session_id) where.sessionId = scope.session_id;
  if (scope.frame_ids) where.id = { in: scope.frame_ids };
  if (scope.gold_id) {
    const gold = await db.goldSet.findUnique({ where: { id: scope.gold_id }, select: { frameIds: true } });
    if (!gold) throw new NotFoundError(`no gold set ${scope.gold_id}`);
    where.id = { in: gold.frameIds };
  }
  return db.frame.findMany({
    where,
    orderBy: [{ sessionId: 'asc' }, { index: 'asc' }, { id: 'asc' }],
    take: Math.min(scope.limit ?? RUN_MAX_FRAMES, RUN_MAX_FRAMES),
    select: { id: true, uri: true, width: true, height: true, sessionId: true },
  });
}

/** Checks a scope names frames that exist before a run is queued for it. */
export async function checkScope(db: Db, scope: RunScope): Promise<number> {
  if (!scope.session_id && !scope.frame_ids && !scope.gold_id)
    throw new InputError('name the frames: session_id, frame_ids or gold_id', [
      { field: 'body', message: 'session_id, frame_ids or gold_id is required' },
    ]);
  if (
    scope.session_id &&
    !(await db.session.findUnique({ where: { id: scope.session_id }, select: { id: true } }))
  )
    throw new NotFoundError(`no session ${scope.session_id}`);
  const frames = await scopeFrames(db, scope);
  if (scope.frame_ids) {
    const found = new Set(frames.map((f) => f.id));
    const missing = scope.frame_ids.filter((id) => !found.has(id));
    if (missing.length) throw new NotFoundError(`${missing.length} frame(s) do not exist`, { missing });
  }
  if (!frames.length) throw new RefusedError('the scope holds no frames');
  return frames.length;
}

/** The model version of a GPU run that runs the configured detector, until the run names its file and hash. */
export const CONFIGURED_DETECTOR = 'pending';

/**
 * A registered model a GPU run may name: one with a model file here (404 unknown; 422 for a model
 * whose predictions are only imported).
 */
export async function runnableModel(db: Db, modelVersion: string) {
  const model = await findModel(db, modelVersion);
  if (model.origin !== 'builtin' && !model.artifactUri)
    throw new RefusedError(
      `model ${modelVersion} has no model file to run here (its predictions are imported): import its runs instead`,
      { reason: 'no_model_file' },
    );
  return model;
}

/**
 * A GPU run waiting for its workflow: of the configured detector, or of the registered model
 * `modelVersion` names (its ONNX file from the models bucket).
 */
export async function queueGpuRun(
  db: Db,
  scope: RunScope,
  actor: Actor,
  modelVersion?: string,
): Promise<InferenceRun> {
  if (modelVersion !== undefined) await runnableModel(db, modelVersion);
  const planned = await checkScope(db, scope);
  const run = await db.inferenceRun.create({
    data: {
      modelVersion: modelVersion ?? CONFIGURED_DETECTOR,
      origin: 'gpu',
      status: 'queued',
      scope: { ...scope },
      sessionId: scope.session_id ?? null,
      framesPlanned: planned,
      createdBy: actor.userId,
    },
  });
  return db.inferenceRun.update({
    where: { id: run.id },
    data: { workflowId: inferenceRunWorkflowId(run.id) },
  });
}

export const inferenceRunWorkflowId = (runId: string) => `inference-run-${runId}`;

export interface ImportedPrediction {
  frame_id: string;
  class_name: string;
  conf: number;
  bbox: number[];
  probs?: Record<string, number> | undefined;
  mask_polygons?: number[][] | undefined;
}

/**
 * An external model's predictions, stored as one completed run in one transaction: every frame
 * must exist, every class must be an ontology class the model declared, every box must lie on its
 * frame (clipped, like an object's), or nothing is written.
 */
export async function importRun(
  db: Db,
  input: { model_version: string; predictions: ImportedPrediction[] },
  actor: Actor,
): Promise<InferenceRun> {
  const model = await findModel(db, input.model_version);
  const names = input.predictions.flatMap((p) => [p.class_name, ...Object.keys(p.probs ?? {})]);
  const ids = await classIdsOf(db, names, 'body.predictions[].class_name');
  const allowed = new Set(model.classIds);
  if (allowed.size) {
    const outside = [...new Set(names.filter((n) => !allowed.has(ids.get(n)!)))];
    if (outside.length)
      throw new InputError(
        `model ${model.modelVersion} does not predict ${outside.slice(0, 20).join(', ')}`,
        [{ field: 'body.predictions[].class_name', message: 'not a class of the model' }],
      );
  }
  const frameIds = [...new Set(input.predictions.map((p) => p.frame_id))];
  const frames = new Map(
    (
      await db.frame.findMany({
        where: { id: { in: frameIds } },
        select: { id: true, width: true, height: true },
      })
    ).map((f) => [f.id, f]),
  );
  const missing = frameIds.filter((id) => !frames.has(id));
  if (missing.length)
    throw new NotFoundError(`${missing.length} frame(s) do not exist`, { missing: missing.slice(0, 50) });
  const rows = input.predictions.map((p, i) => {
    const frame = frames.get(p.frame_id)!;
    const { box } = clipBox(p.bbox, frame, `body.predictions[${i}].bbox`);
    return {
      frameId: p.frame_id,
      classId: ids.get(p.class_name)!,
      conf: p.conf,
      bbox: [...box],
      probs: p.probs
        ? Object.fromEntries(Object.entries(p.probs).map(([n, v]) => [String(ids.get(n)), v]))
        : undefined,
      polygons: p.mask_polygons ?? undefined,
    };
  });
  // One batch, not an interactive transaction: a large import's insert may outlast the
  // interactive timeout on a loaded machine, and the run's id is known beforehand.
  const runId = randomUUID();
  const [run] = await db.$transaction([
    db.inferenceRun.create({
      data: {
        id: runId,
        modelVersion: model.modelVersion,
        origin: 'imported',
        status: 'completed',
        scope: { frame_ids: frameIds.length },
        framesPlanned: frameIds.length,
        framesDone: frameIds.length,
        nPredictions: rows.length,
        createdBy: actor.userId,
        startedAt: new Date(),
        finishedAt: new Date(),
      },
    }),
    db.prediction.createMany({ data: rows.map((r) => ({ ...r, runId })) }),
  ]);
  return run;
}

/**
 * The machine's proposals on a session's frames, rebuilt from what the store still holds: objects
 * whose source is still a machine's, and for every object a human has touched, the class and box
 * its first review found (the review's `before` snapshot). What the machine proposed and a person
 * deleted left no trace, and the history does not keep the model's calibrated scores, so the run
 * is marked reconstructed and its confidences are null.
 */
export async function reconstructRun(
  db: Db,
  input: { session_id: string; model_version?: string | undefined },
  actor: Actor,
): Promise<InferenceRun> {
  const session = await db.session.findUnique({ where: { id: input.session_id }, select: { id: true } });
  if (!session) throw new NotFoundError(`no session ${input.session_id}`);
  const objects = await db.annoObject.findMany({
    where: { frame: { sessionId: session.id } },
    select: { id: true, frameId: true, classId: true, bbox: true, source: true },
  });
  const firstReviews = await db.review.findMany({
    where: { objectId: { in: objects.filter((o) => !isMachineSource(o.source)).map((o) => o.id) } },
    orderBy: { createdAt: 'asc' },
    distinct: ['objectId'],
    select: { objectId: true, before: true },
  });
  const proposedBy = new Map(firstReviews.map((r) => [r.objectId, goldOrigin(r as FirstReview).proposed]));
  // What the machine proposed is read from the first review's `before` snapshot, as for gold provenance.
  const rows = objects.flatMap((o) => {
    if (isMachineSource(o.source)) return [{ frameId: o.frameId, classId: o.classId, bbox: o.bbox }];
    const proposed = proposedBy.get(o.id);
    if (!proposed) return [];
    return [{ frameId: o.frameId, classId: proposed.class_id ?? o.classId, bbox: proposed.bbox ?? o.bbox }];
  });
  const frames = new Set(rows.map((r) => r.frameId)).size;
  return db.$transaction(async (tx) => {
    const run = await tx.inferenceRun.create({
      data: {
        modelVersion: input.model_version ?? 'history',
        origin: 'reconstructed',
        reconstructed: true,
        status: 'completed',
        scope: { session_id: session.id },
        sessionId: session.id,
        framesPlanned: frames,
        framesDone: frames,
        nPredictions: rows.length,
        createdBy: actor.userId,
        startedAt: new Date(),
        finishedAt: new Date(),
      },
    });
    await tx.prediction.createMany({ data: rows.map((r) => ({ ...r, runId: run.id, conf: null })) });
    return run;
  });
}

/** How many frames one commit of a GPU run carries. */
const COMMIT_FRAMES = 16;

export interface PredictRunHeartbeat {
  framesDone: number;
}

/** A model that cannot run here: no retry mends it. */
const modelFailure = refusedAs('ModelUnavailable');

/** The GPU half of the prediction plane: runs the closed-set detector over a run's frames, holding the slot. */
export function createInferenceRunActivities(deps: ActivityDeps) {
  const { db, storage, config } = deps;
  const device = config.workers.gpuDevice;
  const detector = deps.closedSet ?? residentClosedSetDetector(config);

  /**
   * The detector a run names: the resident configured one (also for the shipped model named by
   * version), or a registered model's file loaded for this run alone and released after it.
   */
  const detectorFor = async (
    run: InferenceRun,
  ): Promise<{ closedSet: ClosedSetDetector; release: () => Promise<void> }> => {
    const resident = async () => ({ closedSet: await detector.acquire(), release: () => Promise.resolve() });
    if (run.modelVersion === CONFIGURED_DETECTOR) return resident();
    const model = await findModel(db, run.modelVersion);
    if (model.origin === 'builtin') {
      const shipped = await resident();
      if (shipped.closedSet.model !== model.modelVersion)
        throw new RefusedError(
          `model ${model.modelVersion} is a shipped model this installation no longer runs (it runs ${shipped.closedSet.model})`,
        );
      return shipped;
    }
    const bytes = await readModelArtifact(deps, model);
    const own = await loadClosedSetDetector(config, { bytes, modelVersion: model.modelVersion });
    return { closedSet: own, release: () => own.release() };
  };

  /** The detector over the run's frames, holding the slot; predictions commit per batch with the frame count. */
  const predictWith = async (
    ctx: Context,
    run0: InferenceRun,
    closedSet: ClosedSetDetector,
    workflowId: string,
  ): Promise<{ framesDone: number; predictions: number }> => {
    const frames = await scopeFrames(db, run0.scope as RunScope);
    const classes = await db.ontologyClass.findMany({
      where: { retiredAt: null },
      select: { id: true, name: true },
    });
    const idOf = new Map(classes.map((c) => [c.name, c.id]));
    if (run0.modelVersion === CONFIGURED_DETECTOR)
      await ensureBuiltinModel(db, closedSet.model, [...idOf.values()]);
    let run = await db.inferenceRun.update({
      where: { id: run0.id },
      data: {
        status: 'running',
        modelVersion: closedSet.model,
        framesPlanned: frames.length,
        startedAt: run0.startedAt ?? new Date(),
        error: null,
      },
    });
    await takeSlot(db, {
      device,
      holderKind: 'inference',
      holderId: run.id,
      workflowId,
      sessionId: run.sessionId,
    });
    let details: PredictRunHeartbeat = { framesDone: run.framesDone };
    ctx.heartbeat(details);
    const ticker = setInterval(() => ctx.heartbeat(details), 5000);
    try {
      let batch: Prisma.PredictionCreateManyInput[] = [];
      let batchFrames = 0;
      const commit = async () => {
        const rows = batch;
        const n = batchFrames;
        batch = [];
        batchFrames = 0;
        run = await db.$transaction(async (tx) => {
          if (rows.length) await tx.prediction.createMany({ data: rows });
          await tx.gpuSlot.updateMany({
            where: { device, holderId: run.id },
            data: { heartbeatAt: new Date() },
          });
          return tx.inferenceRun.update({
            where: { id: run.id },
            data: { framesDone: { increment: n }, nPredictions: { increment: rows.length } },
          });
        });
        details = { framesDone: run.framesDone };
        ctx.heartbeat(details);
      };
      for (const frame of frames.slice(run.framesDone)) {
        const image = await decodeFrame(
          await readObject(storage, objectLocation(storage, frame.uri, 'frames')),
        );
        const result = await closedSet.detect(image);
        if (result.run.status === 'ran')
          result.run.detections.forEach((d, i) => {
            const classId = idOf.get(d.className);
            if (classId === undefined) return;
            const probs: Record<string, number> = {};
            for (const [name, score] of Object.entries(result.classScores[i] ?? {})) {
              const id = idOf.get(name);
              if (id !== undefined) probs[id] = score;
            }
            batch.push({
              runId: run.id,
              frameId: frame.id,
              classId,
              conf: d.score,
              bbox: [...d.box],
              probs,
            });
          });
        batchFrames++;
        if (batchFrames >= COMMIT_FRAMES) await commit();
      }
      if (batchFrames) await commit();
      run = await db.inferenceRun.update({
        where: { id: run.id },
        data: { status: 'completed', finishedAt: new Date() },
      });
      return { framesDone: run.framesDone, predictions: run.nPredictions };
    } finally {
      clearInterval(ticker);
      await releaseSlot(db, device, run.id);
    }
  };

  return {
    /**
     * One heartbeating activity on the `gpu` queue. Predictions commit with the run's frame count
     * in one transaction per batch, so a retried attempt resumes after the last committed frame.
     */
    async predictRun(input: {
      runId: string;
      workflowId: string;
    }): Promise<{ framesDone: number; predictions: number }> {
      const ctx = Context.current();
      const run0 = await db.inferenceRun.findUnique({ where: { id: input.runId } });
      if (!run0) throw ApplicationFailure.nonRetryable(`no inference run ${input.runId}`, 'RunNotFound');
      const { closedSet, release } = await detectorFor(run0).catch(modelFailure);
      try {
        return await predictWith(ctx, run0, closedSet, input.workflowId);
      } finally {
        await release();
      }
    },
  };
}

/** Marks a run failed with the reason (the workflow's failure report). */
export async function failRun(db: Db, runId: string, error: string): Promise<void> {
  await db.inferenceRun.updateMany({
    where: { id: runId, status: { not: 'completed' } },
    data: { status: 'failed', error, finishedAt: new Date() },
  });
}

/** The `cpu` queue's bookkeeping for GPU runs. */
export function createInferenceRunBookkeeping(deps: Pick<ActivityDeps, 'db'>) {
  return {
    async failInferenceRun(input: { runId: string; error: string }): Promise<void> {
      await failRun(deps.db, input.runId, input.error);
    },
  };
}

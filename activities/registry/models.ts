import { COCO_TO_ONTOLOGY } from '../../core/detect/coco-ontology';
import { ConflictError, NotFoundError, RefusedError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import { numericLeaves, summariseCurve } from '../../core/registry';
import { Prisma, type Model } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { openModelBytes, yoloxFit } from '../detect/closed-set';
import { EVALUATE_OP } from '../evalgov/evaluate';
import { isMissingObject, objectLocation, readObject } from '../inspector/frame-objects';
import { modelArtifactKey, sha256Hex, type ArtifactDeps } from '../models/artifacts';

/**
 * The model registry (docs/promotion.md): every model version with its state (candidate, champion,
 * retired), its lineage (parent, dataset commit, training job), its file's SHA-256 and its latest
 * evaluations on gold. Registering checks the file before anything can run it: it must open with
 * onnxruntime and fit the YOLOX decoder.
 */

export const MODEL_STATES = ['candidate', 'champion', 'retired'] as const;
/** Largest model file the registry reads (the closed-set family is a few MB; a big one is a mistake). */
export const MAX_MODEL_BYTES = 512 * 1024 * 1024;

/** A catch handler: a unique-index violation (a row created twice at once) as a 409 with `message`. */
export const conflictOnDuplicate =
  (message: string) =>
  (err: unknown): never => {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new ConflictError(message);
    throw err;
  };

export const registryModelOut = (m: Model) => ({
  id: m.id,
  model_version: m.modelVersion,
  name: m.name,
  origin: m.origin,
  task: m.task,
  state: m.state,
  format: m.format,
  sha256: m.sha256,
  size_bytes: m.sizeBytes,
  artifact_uri: m.artifactUri,
  lineage: {
    parent_version: m.parentVersion,
    dataset_commit_id: m.datasetCommitId,
    training_job_id: m.trainingJobId,
  },
  training_config: m.trainingConfig,
  metrics: m.metrics,
  notes: m.notes,
  promoted_at: m.promotedAt?.toISOString() ?? null,
  retired_at: m.retiredAt?.toISOString() ?? null,
  created_at: m.createdAt.toISOString(),
});

export interface EvaluationHeadline {
  operation_id: string;
  gold_id: string;
  run_id: string;
  map: number | null;
  ap50: number | null;
  ar100: number | null;
  precision: number | null;
  recall: number | null;
  parity_within: boolean | null;
  created_at: string;
}

/** The latest whole-gold-set evaluation of each model version on each gold set, newest first. */
export async function latestEvaluations(
  db: Db,
  modelVersions: readonly string[],
): Promise<Map<string, EvaluationHeadline[]>> {
  const out = new Map<string, EvaluationHeadline[]>();
  if (!modelVersions.length) return out;
  const rows = await db.$queryRaw<
    Array<{
      id: string;
      model_version: string;
      gold_id: string;
      run_id: string;
      r: Record<string, unknown>;
      created_at: Date;
    }>
  >`
    SELECT * FROM (
      SELECT DISTINCT ON (params->>'model_version', params->>'gold_id')
             id::text, params->>'model_version' AS model_version, params->>'gold_id' AS gold_id,
             params->>'run_id' AS run_id, created_at,
             jsonb_build_object('map', result->'map', 'ap50', result->'ap50', 'ar100', result->'ar100',
               'precision', result->'precision', 'recall', result->'recall',
               'within', result->'parity'->'within') AS r
        FROM eval_operations
       WHERE op_type = ${EVALUATE_OP} AND params->>'slice_id' IS NULL
         AND params->>'model_version' = ANY(${[...modelVersions]}::text[])
       ORDER BY params->>'model_version', params->>'gold_id', created_at DESC, id DESC) latest
     ORDER BY created_at DESC, id DESC`;
  const num = (v: unknown) => (typeof v === 'number' ? v : null);
  for (const r of rows) {
    const list = out.get(r.model_version) ?? [];
    list.push({
      operation_id: r.id,
      gold_id: r.gold_id,
      run_id: r.run_id,
      map: num(r.r.map),
      ap50: num(r.r.ap50),
      ar100: num(r.r.ar100),
      precision: num(r.r.precision),
      recall: num(r.r.recall),
      parity_within: typeof r.r.within === 'boolean' ? r.r.within : null,
      created_at: r.created_at.toISOString(),
    });
    out.set(r.model_version, list);
  }
  return out;
}

/** A page of model versions, newest first, each with its latest evaluations (GET /api/models). */
export async function listModels(
  db: Db,
  query: {
    state?: string | undefined;
    task?: string | undefined;
    limit: number;
    cursor?: string | undefined;
  },
) {
  const where: Prisma.ModelWhereInput = {
    ...(query.state ? { state: query.state } : {}),
    ...(query.task ? { task: query.task } : {}),
  };
  if (
    query.cursor &&
    !(await db.model.findFirst({ where: { ...where, id: query.cursor }, select: { id: true } }))
  )
    throw new NotFoundError(`cursor ${query.cursor} names no model of this listing`);
  const rows = await db.model.findMany({
    where,
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  const evaluations = await latestEvaluations(
    db,
    page.map((m) => m.modelVersion),
  );
  return {
    items: page.map((m) => ({ ...registryModelOut(m), evaluations: evaluations.get(m.modelVersion) ?? [] })),
    next_cursor,
  };
}

/** The ontology ids the YOLOX family can predict: those the COCO classes map to. */
async function yoloxClassIds(db: Db): Promise<number[]> {
  const names = [...new Set(Object.values(COCO_TO_ONTOLOGY))];
  const rows = await db.ontologyClass.findMany({ where: { name: { in: names } }, select: { id: true } });
  return rows.map((r) => r.id).sort((a, b) => a - b);
}

/**
 * A model file of the models bucket, checked as the registry requires: present (404), not over
 * MAX_MODEL_BYTES, opening with onnxruntime and fitting the YOLOX decoder (422 naming the misfit).
 */
export async function checkedModelFile(
  deps: ArtifactDeps,
  key: string,
  what: string,
): Promise<{ key: string; bytes: Buffer; sha256: string; sizeBytes: number }> {
  const at = objectLocation(deps.storage, key, 'models');
  const stat = await deps.storage.client.statObject(at.bucket, at.key).catch((err: unknown) => {
    if (isMissingObject(err)) throw new NotFoundError(`no file ${key} in the models bucket (${at.bucket})`);
    throw err;
  });
  if (stat.size > MAX_MODEL_BYTES)
    throw new RefusedError(
      `${what}: ${key} is ${stat.size} bytes, more than the ${MAX_MODEL_BYTES} the registry reads`,
      {
        reason: 'too_large',
      },
    );
  const bytes = await readObject(deps.storage, at);
  const session = await openModelBytes(deps.config.models, bytes, what);
  const fit = yoloxFit(session);
  await session.release();
  if ('misfit' in fit)
    throw new RefusedError(`${what} does not fit the YOLOX decoder: ${fit.misfit}`, {
      reason: 'decoder_misfit',
    });
  return { key: at.key, bytes, sha256: sha256Hex(bytes), sizeBytes: bytes.length };
}

export interface RegisterInput {
  model_version: string;
  key?: string | undefined;
  name?: string | undefined;
  task: string;
  parent_version?: string | null | undefined;
  dataset_commit_id?: string | null | undefined;
  notes?: string | null | undefined;
}

async function checkLineage(
  db: Db,
  input: { parent_version?: string | null; dataset_commit_id?: string | null },
) {
  if (input.parent_version && !(await db.model.findUnique({ where: { modelVersion: input.parent_version } })))
    throw new NotFoundError(`no model ${input.parent_version} is registered (parent_version)`);
  if (
    input.dataset_commit_id &&
    !(await db.datasetCommit.findUnique({
      where: { commitId: input.dataset_commit_id },
      select: { commitId: true },
    }))
  )
    throw new NotFoundError(`no dataset commit ${input.dataset_commit_id}`);
}

/** POST /api/govern/registry/register: a checked ONNX file of the models bucket becomes a candidate. */
export async function registerModelFile(
  deps: ArtifactDeps,
  input: RegisterInput,
  actor: Actor,
): Promise<Model> {
  const { db } = deps;
  if (await db.model.findUnique({ where: { modelVersion: input.model_version }, select: { id: true } }))
    throw new ConflictError(`model ${input.model_version} is already registered`);
  await checkLineage(db, input);
  const file = await checkedModelFile(
    deps,
    input.key ?? modelArtifactKey(input.model_version),
    `model ${input.model_version}`,
  );
  const classIds = await yoloxClassIds(db);
  return db.$transaction(async (tx) => {
    const model = await tx.model
      .create({
        data: {
          modelVersion: input.model_version,
          name: input.name ?? input.model_version,
          origin: 'registered',
          task: input.task,
          classIds,
          artifactUri: file.key,
          state: 'candidate',
          format: 'yolox',
          sha256: file.sha256,
          sizeBytes: file.sizeBytes,
          parentVersion: input.parent_version ?? null,
          datasetCommitId: input.dataset_commit_id ?? null,
          notes: input.notes ?? null,
          createdBy: actor.userId,
        },
      })
      // Two registrations of one version at once: the unique index decides.
      .catch(conflictOnDuplicate(`model ${input.model_version} is already registered`));
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'model.register',
      subjectType: 'model',
      subjectId: model.id,
      detail: {
        model_version: model.modelVersion,
        sha256: model.sha256,
        size_bytes: model.sizeBytes,
        artifact_uri: model.artifactUri,
      },
      requestId: actor.requestId,
    });
    return model;
  });
}

/** A training job as the registry shows it beside the model it produced. */
export async function trainingOf(db: Db, jobIds: readonly string[]) {
  const [jobs, points] = await Promise.all([
    db.trainingJob.findMany({ where: { id: { in: [...jobIds] } } }),
    db.trainingCurvePoint.findMany({ where: { jobId: { in: [...jobIds] } }, orderBy: { epoch: 'asc' } }),
  ]);
  return new Map(
    jobs.map((j) => [
      j.id,
      {
        job_id: j.id,
        name: j.name,
        status: j.status,
        trainer: j.trainer,
        compute_target: j.computeTarget,
        dataset_commit_id: j.datasetCommitId,
        parent_version: j.parentVersion,
        sweep_name: j.sweepName,
        model_version: j.modelVersion,
        config: j.config,
        metrics: j.metrics,
        curve: summariseCurve(
          points
            .filter((p) => p.jobId === j.id)
            .map((p) => ({
              epoch: p.epoch,
              trainLoss: p.trainLoss,
              valLoss: p.valLoss,
              metrics: numericLeaves(p.metrics, '', 1),
            })),
        ),
        started_at: j.startedAt?.toISOString() ?? null,
        finished_at: j.finishedAt?.toISOString() ?? null,
      },
    ]),
  );
}

/** GET /api/training/registry: the registry's models, each with the training job that produced it. */
export async function trainingRegistry(db: Db, query: Parameters<typeof listModels>[1]) {
  const page = await listModels(db, query);
  const jobs = await trainingOf(
    db,
    page.items.flatMap((m) => (m.lineage.training_job_id ? [m.lineage.training_job_id] : [])),
  );
  return {
    items: page.items.map((m) => ({
      ...m,
      training: m.lineage.training_job_id ? (jobs.get(m.lineage.training_job_id) ?? null) : null,
    })),
    next_cursor: page.next_cursor,
  };
}

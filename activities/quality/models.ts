import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import type { Model } from '../../generated/prisma/client';
import type { Actor } from '../annotations/objects';
import { recordAudit } from '../audit';
import type { Db } from '../db';

/** A model as the API shows it. */
export const modelOut = (m: Model) => ({
  id: m.id,
  model_version: m.modelVersion,
  name: m.name,
  origin: m.origin,
  task: m.task,
  class_ids: m.classIds,
  artifact_uri: m.artifactUri,
  notes: m.notes,
  created_at: m.createdAt.toISOString(),
});

export interface ExternalModelInput {
  model_version: string;
  name: string;
  task: string;
  class_names: string[];
  artifact_uri?: string | null | undefined;
  notes?: string | null | undefined;
}

/** Ontology ids of class names, refusing (422) every unknown name at once. */
export async function classIdsOf(
  db: Db,
  names: readonly string[],
  field: string,
): Promise<Map<string, number>> {
  const wanted = [...new Set(names)];
  const [own, aliases] = await Promise.all([
    db.ontologyClass.findMany({ where: { name: { in: wanted }, retiredAt: null } }),
    db.ontologyAlias.findMany({ where: { name: { in: wanted } }, include: { class: true } }),
  ]);
  const ids = new Map(own.map((c) => [c.name, c.id]));
  for (const a of aliases) if (!ids.has(a.name) && !a.class.retiredAt) ids.set(a.name, a.class.id);
  const unknown = wanted.filter((n) => !ids.has(n));
  if (unknown.length)
    throw new InputError(
      `unknown class${unknown.length === 1 ? '' : 'es'}: ${unknown.slice(0, 20).join(', ')}`,
      [{ field, message: 'not an ontology class' }],
    );
  return ids;
}

/**
 * Registers a model whose predictions are imported rather than run here (POST /api/models/external).
 * Its classes bound what an imported run of it may predict.
 */
export async function registerExternalModel(db: Db, input: ExternalModelInput, actor: Actor): Promise<Model> {
  const ids = await classIdsOf(db, input.class_names, 'body.class_names');
  if (await db.model.findUnique({ where: { modelVersion: input.model_version } }))
    throw new ConflictError(`model ${input.model_version} is already registered`);
  const model = await db.model.create({
    data: {
      modelVersion: input.model_version,
      name: input.name,
      origin: 'external',
      task: input.task,
      classIds: [...new Set(ids.values())].sort((a, b) => a - b),
      artifactUri: input.artifact_uri ?? null,
      notes: input.notes ?? null,
      createdBy: actor.userId,
    },
  });
  await recordAudit(db, {
    actorId: actor.userId,
    action: 'model.register_external',
    subjectType: 'model',
    subjectId: model.id,
    detail: { model_version: model.modelVersion, classes: model.classIds.length },
    requestId: actor.requestId,
  });
  return model;
}

export async function findModel(db: Db, modelVersion: string): Promise<Model> {
  const model = await db.model.findUnique({ where: { modelVersion } });
  if (!model) throw new NotFoundError(`no model ${modelVersion} is registered`);
  return model;
}

/** The shipped detector as a model row, made on first use (its version names the ONNX file and hash). */
export async function ensureBuiltinModel(
  db: Db,
  modelVersion: string,
  classIds: readonly number[],
): Promise<Model> {
  return db.model.upsert({
    where: { modelVersion },
    create: { modelVersion, name: 'closed-set detector', origin: 'builtin', classIds: [...classIds] },
    update: {},
  });
}

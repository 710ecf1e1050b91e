import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import { checkAssetMove, type AssetState } from '../../core/objects/assets';
import { clampStateForRole, parseObjectState, stateAfterEdit } from '../../core/objects/states';
import type { Annotation, Asset, Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import type { Actor } from './objects';

export const assetOut = (a: Asset) => ({
  id: a.id,
  project_id: a.projectId,
  kind: a.kind,
  name: a.name,
  uri: a.uri,
  meta: a.meta,
  state: a.state,
  version: a.version,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export const annotationOut = (a: Annotation) => ({
  id: a.id,
  asset_id: a.assetId,
  kind: a.kind,
  label: a.label,
  conf: a.conf,
  fields: a.fields,
  payload: a.payload,
  provenance: a.provenance,
  source: a.source,
  state: a.state,
  version: a.version,
  created_at: a.createdAt.toISOString(),
  updated_at: a.updatedAt.toISOString(),
});

export interface AssetItem {
  kind: string;
  name: string | null;
  uri: string | null;
  meta: Record<string, unknown>;
}

/** Creates a project's assets in one transaction (all or none). */
export async function createAssets(
  db: Db,
  projectId: string,
  items: readonly AssetItem[],
  actor: Actor,
): Promise<Asset[]> {
  return db.$transaction(async (tx) => {
    const created = await tx.asset.createManyAndReturn({
      data: items.map((i) => ({
        projectId,
        kind: i.kind,
        name: i.name,
        uri: i.uri,
        meta: i.meta as Prisma.InputJsonValue,
        createdBy: actor.userId,
      })),
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'assets.created',
      subjectType: 'project',
      subjectId: projectId,
      detail: { asset_ids: created.map((a) => a.id) },
      requestId: actor.requestId,
    });
    return created;
  });
}

export async function getAsset(db: Db | Prisma.TransactionClient, id: string): Promise<Asset> {
  const a = await db.asset.findUnique({ where: { id } });
  if (!a) throw new NotFoundError(`no asset ${id}`);
  return a;
}

const versionConflict = (kind: string, id: string, expected: number, actual: number) =>
  new ConflictError(`${kind} ${id} is at version ${actual}, not ${expected}`, {
    conflicts: [{ id, expected, actual }],
  });

export async function moveAsset(
  db: Db,
  id: string,
  to: AssetState,
  expectedVersion: number | null,
  actor: Actor,
): Promise<Asset> {
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      Array<{ state: string; version: number }>
    >`SELECT state, version FROM assets WHERE id = ${id}::uuid FOR UPDATE`;
    const cur = rows[0];
    if (!cur) throw new NotFoundError(`no asset ${id}`);
    if (expectedVersion !== null && expectedVersion !== cur.version)
      throw versionConflict('asset', id, expectedVersion, cur.version);
    checkAssetMove(cur.state, to, actor.role);
    const a = await tx.asset.update({ where: { id }, data: { state: to, version: { increment: 1 } } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'asset.state.changed',
      subjectType: 'asset',
      subjectId: id,
      detail: { from: cur.state, to, version: a.version },
      requestId: actor.requestId,
    });
    return a;
  });
}

/** A project's label configuration restricts annotation kinds and labels when it names them. */
interface LabelConfig {
  kinds?: string[];
  labels?: string[];
}

async function checkAgainstConfig(
  tx: Prisma.TransactionClient,
  projectId: string,
  kind: string | null,
  label: string | null,
): Promise<void> {
  const row = await tx.projectLabelConfig.findUnique({ where: { projectId } });
  const config = (row?.config ?? {}) as LabelConfig;
  if (kind !== null && config.kinds?.length && !config.kinds.includes(kind)) {
    throw new InputError(`kind ${kind} is not in project ${projectId}'s label config`, [
      { field: 'body.kind', message: 'not in the label config' },
    ]);
  }
  if (label !== null && config.labels?.length && !config.labels.includes(label)) {
    throw new InputError(`label ${label} is not in project ${projectId}'s label config`, [
      { field: 'body.label', message: 'not in the label config' },
    ]);
  }
}

export interface AnnotationInput {
  kind: string;
  conf: number | null;
  label: string | null;
  fields: Record<string, unknown>;
  payload: Record<string, unknown>;
  provenance: Record<string, unknown>;
  source: string;
  state: string;
}

/** Same state rules as objects: outside the list → 400, clamped by the caller's role. */
export async function createAnnotation(
  db: Db,
  assetId: string,
  input: AnnotationInput,
  actor: Actor,
): Promise<Annotation> {
  const state = clampStateForRole(parseObjectState(input.state, 'body.state'), actor.role).state;
  return db.$transaction(async (tx) => {
    const asset = await getAsset(tx, assetId);
    await checkAgainstConfig(tx, asset.projectId, input.kind, input.label);
    const a = await tx.annotation.create({
      data: {
        assetId,
        kind: input.kind,
        label: input.label,
        conf: input.conf,
        fields: input.fields as Prisma.InputJsonValue,
        payload: input.payload as Prisma.InputJsonValue,
        provenance: input.provenance as Prisma.InputJsonValue,
        source: input.source,
        state,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'annotation.created',
      subjectType: 'annotation',
      subjectId: a.id,
      detail: { asset_id: assetId, kind: a.kind, label: a.label, state, state_requested: input.state },
      requestId: actor.requestId,
    });
    return a;
  });
}

export interface AnnotationPatchInput {
  expected_version: number | null;
  fields: Record<string, unknown> | null;
  label: string | null;
  payload: Record<string, unknown> | null;
  state: string | null;
}

/** A human edit: named fields replaced, `source` → human, version + 1; expected_version mismatch → 409. */
export async function patchAnnotation(
  db: Db,
  id: string,
  patch: AnnotationPatchInput,
  actor: Actor,
): Promise<Annotation> {
  const state =
    patch.state === null
      ? null
      : clampStateForRole(parseObjectState(patch.state, 'body.state'), actor.role).state;
  return db.$transaction(async (tx) => {
    const rows = await tx.$queryRaw<
      Array<{ version: number; asset_id: string }>
    >`SELECT version, asset_id::text FROM annotations WHERE id = ${id}::uuid FOR UPDATE`;
    const cur = rows[0];
    if (!cur) throw new NotFoundError(`no annotation ${id}`);
    if (patch.expected_version !== null && patch.expected_version !== cur.version)
      throw versionConflict('annotation', id, patch.expected_version, cur.version);
    const before = await tx.annotation.findUniqueOrThrow({ where: { id } });
    await checkAgainstConfig(tx, (await getAsset(tx, cur.asset_id)).projectId, null, patch.label);
    const changesContent = patch.fields !== null || patch.payload !== null || patch.label !== null;
    const nextState = state ?? (changesContent ? stateAfterEdit(before.state, actor.role).state : null);
    const a = await tx.annotation.update({
      where: { id },
      data: {
        ...(patch.fields !== null ? { fields: patch.fields as Prisma.InputJsonValue } : {}),
        ...(patch.payload !== null ? { payload: patch.payload as Prisma.InputJsonValue } : {}),
        ...(patch.label !== null ? { label: patch.label } : {}),
        ...(nextState !== null ? { state: nextState } : {}),
        source: 'human',
        version: { increment: 1 },
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'annotation.patched',
      subjectType: 'annotation',
      subjectId: id,
      detail: JSON.parse(
        JSON.stringify({
          before: annotationOut(before),
          changed: { fields: patch.fields, payload: patch.payload, label: patch.label, state: nextState },
        }),
      ) as Prisma.InputJsonValue,
      requestId: actor.requestId,
    });
    return a;
  });
}

export async function deleteAnnotation(db: Db, id: string, actor: Actor): Promise<void> {
  await db.$transaction(async (tx) => {
    const a = await tx.annotation.findUnique({ where: { id } });
    if (!a) throw new NotFoundError(`no annotation ${id}`);
    await tx.annotation.delete({ where: { id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'annotation.deleted',
      subjectType: 'annotation',
      subjectId: id,
      detail: JSON.parse(JSON.stringify({ before: annotationOut(a) })) as Prisma.InputJsonValue,
      requestId: actor.requestId,
    });
  });
}

export async function projectStats(db: Db, projectId: string) {
  const [assets, annotations] = await Promise.all([
    db.asset.groupBy({ by: ['state'], where: { projectId }, _count: true }),
    db.$queryRaw<Array<{ kind: string; state: string; n: bigint }>>`
      SELECT an.kind, an.state, count(*) AS n FROM annotations an JOIN assets a ON a.id = an.asset_id
      WHERE a.project_id = ${projectId} GROUP BY an.kind, an.state ORDER BY an.kind, an.state`,
  ]);
  return {
    project_id: projectId,
    assets: {
      total: assets.reduce((s, a) => s + a._count, 0),
      by_state: Object.fromEntries(assets.map((a) => [a.state, a._count])),
    },
    annotations: {
      total: annotations.reduce((s, a) => s + Number(a.n), 0),
      by_kind_state: annotations.map((a) => ({ kind: a.kind, state: a.state, count: Number(a.n) })),
    },
  };
}

import { z } from 'zod';
import {
  annotationOut,
  assetOut,
  createAnnotation,
  createAssets,
  deleteAnnotation,
  getAsset,
  moveAsset,
  patchAnnotation,
  projectStats,
} from '../../../activities/annotations/assets';
import { recordAudit } from '../../../activities/audit';
import { InputError } from '../../../core/errors';
import { ASSET_KINDS, ASSET_STATES } from '../../../core/objects/assets';
import { OBJECT_STATES } from '../../../core/objects/states';
import type { Prisma } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { actorOf } from '../../http/actor';

const jsonObject = z.record(z.string(), z.unknown());
const projectId = z.string().trim().min(1).max(200);

export const AssetsIn = z.strictObject({
  project_id: projectId,
  items: z
    .array(
      z.strictObject({
        kind: z.enum(ASSET_KINDS),
        name: z.string().max(500).nullable().default(null),
        uri: z.string().max(2000).nullable().default(null),
        meta: jsonObject.default({}),
      }),
    )
    .min(1)
    .max(500),
});

export const AnnotationIn = z.strictObject({
  kind: z.string().min(1).max(64),
  conf: z.number().min(0).max(1).nullable().default(null),
  label: z.string().min(1).max(200).nullable().default(null),
  fields: jsonObject.default({}),
  payload: jsonObject.default({}),
  provenance: jsonObject.default({}),
  source: z.string().min(1).max(16).default('human'),
  /** Checked against the allowed list by the handler (400), then clamped by role. */
  state: z.string().max(32).default('accepted'),
});

export const AnnotationPatch = z.strictObject({
  expected_version: z.int().nullable().default(null),
  fields: jsonObject.nullable().default(null),
  label: z.string().min(1).max(200).nullable().default(null),
  payload: jsonObject.nullable().default(null),
  state: z.string().max(32).nullable().default(null),
});

export const AssetStateIn = z.strictObject({
  state: z.enum(ASSET_STATES),
  expected_version: z.int().nullable().default(null),
});

export const LabelConfigIn = z.strictObject({
  kinds: z.array(z.string().min(1).max(64)).max(100).default([]),
  labels: z.array(z.string().min(1).max(200)).max(2000).default([]),
});

const PageQuery = z.strictObject({
  state: z.enum(ASSET_STATES).optional(),
  cursor: z.uuid().optional(),
  limit: z.coerce.number().int().min(1).max(500).default(100),
});

const projectIdOf = (params: Record<string, string>): string => {
  const parsed = projectId.safeParse(params.project_id);
  if (!parsed.success)
    throw new InputError('project_id is empty or too long', [
      { field: 'path.project_id', message: 'invalid' },
    ]);
  return parsed.data;
};

/** Assets and generic annotations for non-frame data (docs/annotations.md). */
export function createAssetsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('assets')
    .get(
      '/api/assets/kinds',
      { summary: 'Asset kinds, asset states and annotation states', access: 'annotator' },
      () => ({ kinds: ASSET_KINDS, states: ASSET_STATES, annotation_states: OBJECT_STATES }),
    )
    .post(
      '/api/assets',
      {
        summary: "Register a project's assets (all or none)",
        access: 'annotator',
        body: { name: 'AssetsIn', schema: AssetsIn },
        successStatus: 201,
      },
      async ({ body, principal, req }) => ({
        items: (await createAssets(db, body.project_id, body.items, actorOf(principal, req))).map(assetOut),
      }),
    )
    .get(
      '/api/assets/{asset_id}',
      {
        summary: 'One asset',
        access: 'annotator',
        params: uuidParams('asset_id'),
        statuses: { 404: 'no such asset' },
      },
      async ({ params }) => assetOut(await getAsset(db, params.asset_id)),
    )
    .post(
      '/api/assets/{asset_id}/state',
      {
        summary: 'Move an asset along its lifecycle (docs/annotations.md)',
        access: 'annotator',
        params: uuidParams('asset_id'),
        body: { name: 'AssetStateIn', schema: AssetStateIn },
        statuses: {
          404: 'no such asset',
          409: 'move not allowed from the current state, or expected_version mismatch',
        },
      },
      async ({ params, body, principal, req }) =>
        assetOut(
          await moveAsset(db, params.asset_id, body.state, body.expected_version, actorOf(principal, req)),
        ),
    )
    .get(
      '/api/assets/{asset_id}/annotations',
      {
        summary: "An asset's annotations, oldest first",
        access: 'annotator',
        params: uuidParams('asset_id'),
        statuses: { 404: 'no such asset' },
      },
      async ({ params }) => {
        const asset = await getAsset(db, params.asset_id);
        const items = await db.annotation.findMany({
          where: { assetId: asset.id },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        });
        return { items: items.map(annotationOut) };
      },
    )
    .post(
      '/api/assets/{asset_id}/annotations',
      {
        summary: 'Annotate an asset; state checked (400) and clamped by role like objects',
        access: 'annotator',
        params: uuidParams('asset_id'),
        body: { name: 'AnnotationIn', schema: AnnotationIn },
        successStatus: 201,
        statuses: { 400: 'state outside the allowed list', 404: 'no such asset' },
      },
      async ({ params, body, principal, req }) =>
        annotationOut(await createAnnotation(db, params.asset_id, body, actorOf(principal, req))),
    )
    .patch(
      '/api/annotations/{annotation_id}',
      {
        summary: 'Edit an annotation; expected_version mismatch → 409',
        access: 'annotator',
        params: uuidParams('annotation_id'),
        body: { name: 'AnnotationPatch', schema: AnnotationPatch },
        statuses: {
          400: 'state outside the allowed list',
          404: 'no such annotation',
          409: 'expected_version mismatch',
        },
      },
      async ({ params, body, principal, req }) =>
        annotationOut(await patchAnnotation(db, params.annotation_id, body, actorOf(principal, req))),
    )
    .delete(
      '/api/annotations/{annotation_id}',
      {
        summary: 'Delete an annotation',
        access: 'reviewer',
        params: uuidParams('annotation_id'),
        statuses: { 404: 'no such annotation' },
      },
      async ({ params, principal, req }) => {
        const id = params.annotation_id;
        await deleteAnnotation(db, id, actorOf(principal, req));
        return { id, deleted: true };
      },
    )
    .get(
      '/api/projects/{project_id}/assets',
      {
        summary: "A project's assets, oldest first; cursor = the last asset id of the previous page",
        access: 'annotator',
        params: z.object({ project_id: projectId }),
        query: PageQuery,
      },
      async ({ params, query }) => {
        const pid = projectIdOf(params);
        const after = query.cursor
          ? await db.asset.findFirst({ where: { id: query.cursor, projectId: pid } })
          : null;
        if (query.cursor && !after)
          throw new InputError('cursor is not an asset of this project', [
            { field: 'query.cursor', message: 'unknown asset' },
          ]);
        const rows = await db.asset.findMany({
          where: {
            projectId: pid,
            ...(query.state ? { state: query.state } : {}),
            ...(after
              ? {
                  OR: [
                    { createdAt: { gt: after.createdAt } },
                    { createdAt: after.createdAt, id: { gt: after.id } },
                  ],
                }
              : {}),
          },
          orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
          take: query.limit + 1,
        });
        const items = rows.slice(0, query.limit).map(assetOut);
        return { items, next_cursor: rows.length > query.limit ? items[items.length - 1]!.id : null };
      },
    )
    .post(
      '/api/projects/{project_id}/label-config',
      {
        summary: "Set the project's label config: allowed annotation kinds and labels (empty = any)",
        access: 'reviewer',
        params: z.object({ project_id: projectId }),
        body: { name: 'LabelConfigIn', schema: LabelConfigIn },
      },
      async ({ params, body, principal, req }) => {
        const pid = projectIdOf(params);
        const row = await db.$transaction(async (tx) => {
          const saved = await tx.projectLabelConfig.upsert({
            where: { projectId: pid },
            create: { projectId: pid, config: body as Prisma.InputJsonValue, updatedBy: principal.userId },
            update: {
              config: body as Prisma.InputJsonValue,
              version: { increment: 1 },
              updatedBy: principal.userId,
            },
          });
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'project.label_config.set',
            subjectType: 'project',
            subjectId: pid,
            detail: body,
            requestId: String(req.id),
          });
          return saved;
        });
        return { project_id: pid, config: row.config, version: row.version };
      },
    )
    .get(
      '/api/projects/{project_id}/stats',
      {
        summary: "Counts of a project's assets by state and annotations by kind and state",
        access: 'annotator',
        params: z.object({ project_id: projectId }),
      },
      async ({ params }) => projectStats(db, projectIdOf(params)),
    );
}

import { CopyDestinationOptions, CopySourceOptions } from 'minio';
import type { ParquetQueryFilter } from 'hyparquet';
import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import {
  commitIdSchema,
  commitParts,
  findCommit,
  openPart,
  partFile,
  partRowCounts,
  readPart,
  type ParquetTable,
  type TablePart,
} from '../../../activities/datasets/read';
import { assertConsentAllows } from '../../../activities/govern/consent';
import { listKeys, removeKeys } from '../../../activities/ingest/storage';
import { isMissingObject } from '../../../activities/inspector/frame-objects';
import type { ObjectStore } from '../../../activities/storage/object-store';
import { InputError, NotFoundError } from '../../../core/errors';
import { FRAME_COLUMNS, OBJECT_COLUMNS } from '../../../core/export/parquet-tables';
import type { DatasetCommit, LakeTable } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import type { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

/**
 * The lake (docs/datasets-read.md): a commit's Parquet tables published into the `lake` bucket
 * under stable table names, and read back through the API with filters and paging. A table's
 * files lie under `<table>/<commit_id>/part-NNNNN.parquet`; its `lake_tables` row names the
 * current prefix, so a republication writes the new parts beside the old ones, switches the row,
 * and only then deletes the old parts.
 */

const KINDS = ['objects', 'frames'] as const satisfies readonly ParquetTable[];

/** A publication's base name; each kind's table is `<base>_<kind>`. */
const BASE_NAME = /^[a-z][a-z0-9_]{0,54}$/;
/** A table name always ends in its kind, so it never reads as another `/api/datasets/…/x` route. */
const TABLE_NAME = /^[a-z][a-z0-9_]{0,54}_(objects|frames)$/;

const PublishIn = z.strictObject({
  commit_id: commitIdSchema,
  table: z.string().regex(BASE_NAME, 'lower_snake_case, 1–55 characters, starting with a letter').optional(),
  kinds: z
    .array(z.enum(KINDS))
    .min(1)
    .max(2)
    .refine((k) => new Set(k).size === k.length, 'each kind once')
    .default([...KINDS]),
});

/** Columns a lake query may filter on with equality, per kind. */
const EQUALITY_FILTERS = {
  objects: [
    'class_name',
    'class_id',
    'l0',
    'l1',
    'state',
    'source',
    'split',
    'session_id',
    'frame_id',
    'track_id',
  ],
  frames: ['split', 'session_id', 'frame_id', 'lighting', 'context'],
} as const satisfies Record<ParquetTable, readonly string[]>;
type FilterColumn = (typeof EQUALITY_FILTERS)[ParquetTable][number];

const filterValue = z.string().min(1).max(200);
const LakeQuery = z.strictObject({
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  limit: limitParam(50, 500),
  /** Comma-separated columns to answer with; every column when absent. */
  columns: z.string().max(2000).optional(),
  class_name: filterValue.optional(),
  class_id: z.coerce.number().int().min(0).max(2_147_483_647).optional(),
  l0: filterValue.optional(),
  l1: filterValue.optional(),
  state: filterValue.optional(),
  source: filterValue.optional(),
  split: filterValue.optional(),
  session_id: filterValue.optional(),
  frame_id: filterValue.optional(),
  track_id: filterValue.optional(),
  lighting: filterValue.optional(),
  context: filterValue.optional(),
  /** Objects whose `conf` is at least this; objects without a confidence never match. */
  min_conf: z.coerce.number().min(0).max(1).optional(),
});
type LakeQuery = z.infer<typeof LakeQuery>;

const COLUMNS: Record<ParquetTable, readonly string[]> = {
  objects: OBJECT_COLUMNS.map((c) => c.name),
  frames: FRAME_COLUMNS.map((c) => c.name),
};

/** A commit name as a table base name: lower_snake_case, starting with a letter. */
export function lakeBaseName(name: string): string {
  const snake = name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '_')
    .replace(/^_+|_+$/g, '');
  return (/^[a-z]/.test(snake) ? snake : `t_${snake}`).slice(0, 55).replace(/_+$/, '');
}

const tablePrefix = (table: string, commitId: string) => `${table}/${commitId}/`;

/** Long enough for the server-side copies of a large commit's parts, which happen under the lock. */
const PUBLISH_TIMEOUT_MS = 10 * 60_000;

interface Publication {
  kind: ParquetTable;
  table: string;
  prefix: string;
  parts: TablePart[];
  rows: number;
}

/**
 * Publishes the commit's tables. Per table, under an advisory lock, so two publications of one
 * table never interleave: the parts are copied server-side under the new prefix, then the row is
 * switched; the old prefix's parts are deleted after the switch commits. A failure before the
 * switch removes what it copied (unless that prefix is the live one: republishing the same commit).
 */
async function publish(
  deps: AppDeps,
  commit: DatasetCommit,
  base: string,
  kinds: readonly ParquetTable[],
  actor: { userId: string; requestId: string },
) {
  const { db, storage } = deps;
  const lake = storage.bucket('lake');
  const plans: Publication[] = [];
  for (const kind of kinds) {
    const table = `${base}_${kind}`;
    const parts = commitParts(storage, commit, kind);
    plans.push({ kind, table, prefix: tablePrefix(table, commit.commitId), parts, rows: 0 });
  }
  const missing = plans.filter((p) => !p.parts.length).map((p) => p.kind);
  if (missing.length)
    throw new InputError(
      `commit ${commit.commitId} has no Parquet ${missing.join(' or ')} table (its formats: ${commit.formats.join(', ')})`,
      [{ field: 'body.kinds', message: `no ${missing.join(', ')} table in the commit` }],
    );
  for (const plan of plans) plan.rows = (await partRowCounts(storage, plan.parts)).reduce((s, n) => s + n, 0);

  const removeCopies = async () => {
    const live = new Set(
      (await db.lakeTable.findMany({ where: { name: { in: plans.map((p) => p.table) } } })).map((t) => t.key),
    );
    for (const plan of plans)
      if (!live.has(plan.prefix)) await removeKeys(storage, lake, await listKeys(storage, lake, plan.prefix));
  };
  const previous = await db
    .$transaction(
      async (tx) => {
        for (const plan of [...plans].sort((x, y) => x.table.localeCompare(y.table)))
          await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtext(${`lake:${plan.table}`}))`;
        const old = await tx.lakeTable.findMany({ where: { name: { in: plans.map((p) => p.table) } } });
        for (const plan of plans)
          for (const part of plan.parts)
            await storage.client.copyObject(
              new CopySourceOptions({ Bucket: part.bucket, Object: part.key }),
              new CopyDestinationOptions({ Bucket: lake, Object: `${plan.prefix}${partFile(part)}` }),
            );
        for (const plan of plans) {
          const row = {
            commitId: commit.commitId,
            kind: plan.kind,
            key: plan.prefix,
            rows: plan.rows,
            publishedBy: actor.userId,
            publishedAt: new Date(),
          };
          await tx.lakeTable.upsert({
            where: { name: plan.table },
            create: { name: plan.table, ...row },
            update: row,
          });
        }
        await recordAudit(tx, {
          actorId: actor.userId,
          action: 'lake.published',
          subjectType: 'dataset_commit',
          subjectId: commit.commitId,
          detail: { tables: plans.map((p) => ({ table: p.table, rows: p.rows, parts: p.parts.length })) },
          requestId: actor.requestId,
        });
        return old;
      },
      { timeout: PUBLISH_TIMEOUT_MS, maxWait: 30_000 },
    )
    .catch(async (err: unknown) => {
      await removeCopies();
      throw err;
    });
  const replaced = new Map(previous.map((t) => [t.name, t]));
  for (const plan of plans) {
    const old = replaced.get(plan.table);
    if (old && old.key !== plan.prefix)
      await removeKeys(storage, lake, await listKeys(storage, lake, old.key));
  }
  return plans.map((p) => ({
    table: p.table,
    kind: p.kind,
    bucket: lake,
    prefix: p.prefix,
    parts: p.parts.length,
    rows: p.rows,
    replaced_commit_id: replaced.get(p.table)?.commitId ?? null,
  }));
}

/** The published parts of a table, in name (page) order. */
async function lakeParts(storage: ObjectStore, table: LakeTable): Promise<TablePart[]> {
  const bucket = storage.bucket('lake');
  const parts: TablePart[] = [];
  for await (const item of storage.client.listObjectsV2(bucket, table.key, true) as AsyncIterable<{
    name?: string;
    size?: number;
  }>)
    if (item.name?.endsWith('.parquet'))
      parts.push({ table: table.kind as ParquetTable, bucket, key: item.name, size: item.size ?? 0 });
  return parts.sort((x, y) => (x.key < y.key ? -1 : x.key > y.key ? 1 : 0));
}

/**
 * The query's filters as hyparquet's, and the columns they read; a filter the table's kind has no
 * column for is refused.
 */
function lakeFilter(kind: ParquetTable, query: LakeQuery): { filter?: ParquetQueryFilter; reads: string[] } {
  const allowed: readonly string[] = EQUALITY_FILTERS[kind];
  const every = new Set<FilterColumn>([...EQUALITY_FILTERS.objects, ...EQUALITY_FILTERS.frames]);
  const conditions: ParquetQueryFilter[] = [];
  const reads: string[] = [];
  const refused: string[] = [];
  for (const column of every) {
    const value = query[column];
    if (value === undefined) continue;
    if (!allowed.includes(column)) refused.push(column);
    conditions.push({ [column]: { $eq: value } });
    reads.push(column);
  }
  if (query.min_conf !== undefined) {
    if (kind !== 'objects') refused.push('min_conf');
    conditions.push({ conf: { $gte: query.min_conf } });
    reads.push('conf');
  }
  if (refused.length)
    throw new InputError(
      `a ${kind} table cannot be filtered on ${refused.join(', ')}`,
      refused.map((c) => ({ field: `query.${c}`, message: `not a filter of a ${kind} table` })),
    );
  return { filter: conditions.length ? { $and: conditions } : undefined, reads };
}

function lakeColumns(kind: ParquetTable, columns: string | undefined): readonly string[] {
  if (!columns) return COLUMNS[kind];
  const asked = [...new Set(columns.split(',').map((c) => c.trim()))].filter(Boolean);
  const unknown = asked.filter((c) => !COLUMNS[kind].includes(c));
  if (unknown.length || !asked.length)
    throw new InputError(`not columns of a ${kind} table: ${unknown.join(', ') || '(none given)'}`, [
      { field: 'query.columns', message: `columns of a ${kind} table: ${COLUMNS[kind].join(', ')}` },
    ]);
  return asked;
}

/** JSON has no bigint or undefined; Parquet readers may hand out either. */
const jsonValue = (v: unknown): unknown =>
  typeof v === 'bigint' ? (Number.isSafeInteger(Number(v)) ? Number(v) : v.toString()) : (v ?? null);

/**
 * One page of matching rows, in table order, and the exact number of matches: without a filter
 * the counts come from the footers; with one, each part's filter columns are read to count (and
 * row groups whose statistics exclude the filter are skipped), and the page's columns are read only
 * from the parts the page overlaps.
 */
async function queryLake(storage: ObjectStore, table: LakeTable, query: LakeQuery) {
  const kind = table.kind as ParquetTable;
  const { filter, reads } = lakeFilter(kind, query);
  const columns = lakeColumns(kind, query.columns);
  const rows: Array<Record<string, unknown>> = [];
  let total = 0;
  for (const part of await lakeParts(storage, table)) {
    const open = await openPart(storage, part, { footerOnly: !filter });
    const matching = filter ? (await readPart(open, { columns: reads, filter })).length : open.rows;
    const start = Math.max(query.offset - total, 0);
    const end = Math.min(query.offset + query.limit - total, matching);
    total += matching;
    if (start >= end) continue;
    const page = filter
      ? (await readPart(open, { columns, filter })).slice(start, end)
      : await readPart(open, { columns, rowStart: start, rowEnd: end });
    for (const r of page) rows.push(Object.fromEntries(columns.map((c) => [c, jsonValue(r[c])])));
  }
  const next = query.offset + rows.length;
  return {
    table: table.name,
    kind,
    commit_id: table.commitId,
    published_at: table.publishedAt.toISOString(),
    columns,
    rows,
    total_matching: total,
    offset: query.offset,
    limit: query.limit,
    next_offset: next < total ? next : null,
  };
}

/** The lake routes, added to the `datasets` group before its `/api/datasets/{commit_id}` routes. */
export function addLakeRoutes(group: RouteGroup, deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  return group
    .post(
      '/api/datasets/lake/publish',
      {
        summary:
          "Publish a commit's Parquet tables into the lake bucket as `<table>_objects` / `<table>_frames` (table defaults to the commit's name in lower_snake_case), replacing an older publication of the same table",
        access: 'reviewer',
        body: { name: 'LakePublishIn', schema: PublishIn },
        successStatus: 201,
        statuses: { 404: 'no such commit', 422: 'the commit holds a session whose consent blocks export' },
      },
      async ({ body, principal, req }) => {
        const commit = await findCommit(db, body.commit_id);
        await assertConsentAllows(db, deps.config.consent, 'export', commit.sessionIds);
        const tables = await publish(
          deps,
          commit,
          body.table ?? lakeBaseName(commit.name),
          body.kinds,
          actorOf(principal, req),
        );
        return { commit_id: commit.commitId, tables };
      },
    )
    .get(
      '/api/datasets/lake/{table}',
      {
        summary:
          'Rows of a published lake table in table order: equality filters (objects: class_name, class_id, l0, l1, state, source, split, session_id, frame_id, track_id, min_conf; frames: split, session_id, frame_id, lighting, context), column projection, offset/limit (at most 500) and the total number of matches',
        access: 'annotator',
        params: z.object({
          table: z.string().regex(TABLE_NAME, 'a lake table name: <lower_snake_case>_objects or _frames'),
        }),
        query: LakeQuery,
        statuses: { 404: 'no such lake table' },
      },
      async ({ params, query }) => {
        // A republication deletes the old parts after switching the row: read again from the new row.
        for (let attempt = 0; ; attempt++) {
          const table = await db.lakeTable.findUnique({ where: { name: params.table } });
          if (!table) throw new NotFoundError(`no lake table ${params.table}`);
          try {
            return await queryLake(storage, table, query);
          } catch (err) {
            if (attempt > 0 || !isMissingObject(err)) throw err;
          }
        }
      },
    );
}

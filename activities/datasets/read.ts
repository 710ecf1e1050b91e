import {
  cachedAsyncBuffer,
  parquetMetadataAsync,
  parquetReadObjects,
  type AsyncBuffer,
  type FileMetaData,
  type ParquetQueryFilter,
} from 'hyparquet';
import { z } from 'zod';
import { InputError, NotFoundError } from '../../core/errors';
import type { CommitFile } from '../../core/datasets/manifest';
import type { FrameRow, ObjectRow } from '../../core/export/parquet-tables';
import { Prisma, type DatasetCommit } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';

/**
 * Reading dataset commits (docs/datasets-read.md): the commit row, its file list, and the rows of
 * its two Parquet tables straight from the exports bucket with hyparquet. A part is one export page,
 * so it is bounded; rows are read part by part with column projection, and a part is fetched with
 * ranged reads, so a query that needs a few columns of a large part reads only those.
 */

/** A commit id: the SHA-256 of its manifest, lower-case hex. */
export const COMMIT_ID_PATTERN = /^[0-9a-f]{64}$/;
/** A commit id in a path, query or body; anything else is refused (422) before a lookup. */
export const commitIdSchema = z
  .string()
  .regex(COMMIT_ID_PATTERN, 'a commit id: 64 lower-case hexadecimal characters (SHA-256)');

export async function findCommit(db: Db, commitId: string): Promise<DatasetCommit> {
  const commit = await db.datasetCommit.findUnique({ where: { commitId } });
  if (!commit) throw new NotFoundError(`no dataset commit ${commitId}`);
  return commit;
}

/** The commit's files as recorded: [{path, sha256, size}] sorted by path. */
export const commitFiles = (commit: Pick<DatasetCommit, 'files'>): CommitFile[] =>
  commit.files as unknown as CommitFile[];

/** Where one file of a commit can be fetched through the API (the `datasets` blob route). */
export const blobHref = (commitId: string, path: string): string =>
  `/api/datasets/blob?commit_id=${commitId}&path=${encodeURIComponent(path)}`;

export type ParquetTable = 'objects' | 'frames';
export interface TableRows {
  objects: ObjectRow;
  frames: FrameRow;
}

/** One Parquet file of a table, wherever it lies (a commit's prefix in exports, or the lake). */
export interface TablePart<T extends ParquetTable = ParquetTable> {
  table: T;
  bucket: string;
  key: string;
  /** Bytes; known from the commit's file list or a listing, so no request is spent on it. */
  size: number;
}

/** The parts of one table of a commit, in page order. */
export function commitParts<T extends ParquetTable>(
  storage: ObjectStore,
  commit: Pick<DatasetCommit, 'files' | 'prefix'>,
  table: T,
): TablePart<T>[] {
  const folder = `parquet/${table}/`;
  return commitFiles(commit)
    .filter((f) => f.path.startsWith(folder) && f.path.endsWith('.parquet'))
    .sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : 0))
    .map((f) => ({
      table,
      bucket: storage.bucket('exports'),
      key: `${commit.prefix}${f.path}`,
      size: f.size,
    }));
}

async function readRange(
  storage: ObjectStore,
  part: TablePart,
  start: number,
  end: number,
): Promise<ArrayBuffer> {
  const stream = await storage.client.getPartialObject(part.bucket, part.key, start, end - start);
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(chunk as Buffer);
  const bytes = Buffer.concat(chunks);
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}

/** An opened part: its bytes behind ranged reads, and its footer. */
export interface OpenPart {
  file: AsyncBuffer;
  metadata: FileMetaData;
  rows: number;
}

/** Below this a part is fetched whole, in one request: one round trip beats several small ranges. */
const WHOLE_PART_BYTES = 1 << 20;
/** The footer of a part of these tables is a few KB; one read of this many bytes takes all of it. */
const FOOTER_READ_BYTES = 64 << 10;

/**
 * Opens a part for reading rows, or only for its footer (`footerOnly`: row counts and statistics,
 * without fetching a small part whole).
 */
export async function openPart(
  storage: ObjectStore,
  part: TablePart,
  opts: { footerOnly?: boolean } = {},
): Promise<OpenPart> {
  const file = cachedAsyncBuffer(
    { byteLength: part.size, slice: (start, end) => readRange(storage, part, start, end ?? part.size) },
    { minSize: opts.footerOnly ? 0 : WHOLE_PART_BYTES },
  );
  const metadata = await parquetMetadataAsync(file, { initialFetchSize: FOOTER_READ_BYTES });
  return { file, metadata, rows: Number(metadata.num_rows) };
}

export interface PartQuery {
  /** Columns to decode; those a filter needs are read as well and left out of the rows. */
  columns?: readonly string[];
  filter?: ParquetQueryFilter;
  /** Rows of the part (before filtering) to read, half-open. */
  rowStart?: number;
  rowEnd?: number;
}

/** The rows of one part as objects; a row group the filter's statistics exclude is never fetched. */
export async function readPart(
  part: OpenPart,
  query: PartQuery = {},
): Promise<Array<Record<string, unknown>>> {
  if (part.rows === 0) return [];
  return parquetReadObjects({
    file: part.file,
    metadata: part.metadata,
    columns: query.columns ? [...query.columns] : undefined,
    filter: query.filter,
    rowStart: query.rowStart,
    rowEnd: query.rowEnd,
  });
}

/**
 * The rows of a table's parts, one batch per part, projected to `columns`: the memory held is one
 * part's worth of those columns.
 */
export async function* readTable<T extends ParquetTable, C extends keyof TableRows[T] & string>(
  storage: ObjectStore,
  parts: readonly TablePart<T>[],
  query: { columns: readonly C[]; filter?: ParquetQueryFilter },
): AsyncGenerator<Array<Pick<TableRows[T], C>>> {
  for (const part of parts) {
    const rows = await readPart(await openPart(storage, part), query);
    // The columns are those of the table's declared schema (core/export/parquet-tables.ts).
    yield rows as unknown as Array<Pick<TableRows[T], C>>;
  }
}

/** Rows per part from the footers alone. */
export async function partRowCounts(storage: ObjectStore, parts: readonly TablePart[]): Promise<number[]> {
  const counts: number[] = [];
  for (const part of parts) counts.push((await openPart(storage, part, { footerOnly: true })).rows);
  return counts;
}

/** Largest page of GET /api/datasets. */
export const MAX_COMMITS_PAGE = 200;

const CURSOR_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$/;

/**
 * The commit list's keyset cursor: the last commit's creation time as PostgreSQL text with
 * microseconds and its id, the tie-breaker (core/pagination.ts's cursor carries a UUID, which a
 * commit id is not).
 */
function encodeCommitCursor(createdAt: string, commitId: string): string {
  return Buffer.from(JSON.stringify({ t: createdAt, c: commitId })).toString('base64url');
}

function decodeCommitCursor(cursor: string): { createdAt: string; commitId: string } {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
  } catch {
    parsed = null;
  }
  const { t, c } = (parsed ?? {}) as { t?: unknown; c?: unknown };
  if (typeof t !== 'string' || typeof c !== 'string' || !CURSOR_TIME.test(t) || !COMMIT_ID_PATTERN.test(c))
    throw new InputError('cursor is not one this API issued', [
      { field: 'query.cursor', message: 'malformed cursor' },
    ]);
  return { createdAt: t, commitId: c };
}

/** Commits newest first, by keyset: rows that existed when paging began appear exactly once. */
export async function listCommits(
  db: Db,
  query: { name?: string; limit: number; cursor?: string },
): Promise<{ commits: DatasetCommit[]; nextCursor: string | null }> {
  const conds: Prisma.Sql[] = [];
  if (query.name) conds.push(Prisma.sql`name = ${query.name}`);
  if (query.cursor) {
    const after = decodeCommitCursor(query.cursor);
    conds.push(Prisma.sql`(created_at, commit_id) < (${after.createdAt}::timestamptz, ${after.commitId})`);
  }
  // The key is read as text with microseconds: a Date would round it to milliseconds.
  const keys = await db.$queryRaw<Array<{ commit_id: string; key_at: string }>>`
    SELECT commit_id, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS key_at
      FROM dataset_commits
     ${conds.length ? Prisma.sql`WHERE ${Prisma.join(conds, ' AND ')}` : Prisma.empty}
     ORDER BY created_at DESC, commit_id DESC
     LIMIT ${query.limit + 1}`;
  const page = keys.slice(0, query.limit);
  const rows = new Map(
    (await db.datasetCommit.findMany({ where: { commitId: { in: page.map((k) => k.commit_id) } } })).map(
      (c) => [c.commitId, c],
    ),
  );
  const last = page.at(-1);
  return {
    commits: page.flatMap((k) => (rows.has(k.commit_id) ? [rows.get(k.commit_id)!] : [])),
    nextCursor: keys.length > query.limit && last ? encodeCommitCursor(last.key_at, last.commit_id) : null,
  };
}

/** Frame columns a preview shows. */
const PREVIEW_FRAME_COLUMNS = [
  'frame_id',
  'session_id',
  'frame_index',
  'timestamp_ms',
  'split',
  'width',
  'height',
  'image',
  'context',
  'objects',
] as const;
/** Object columns a preview shows. */
const PREVIEW_OBJECT_COLUMNS = [
  'object_id',
  'frame_id',
  'class_id',
  'class_name',
  'l1',
  'x1',
  'y1',
  'x2',
  'y2',
  'conf',
  'source',
  'state',
] as const;

export type PreviewFrame = Pick<FrameRow, (typeof PREVIEW_FRAME_COLUMNS)[number]>;
export type PreviewObject = Pick<ObjectRow, (typeof PREVIEW_OBJECT_COLUMNS)[number]>;

/** A part's file name (`part-NNNNN.parquet`): its page number, the same in every table of a commit. */
export const partFile = (part: TablePart): string => part.key.slice(part.key.lastIndexOf('/') + 1);

/**
 * A window of a commit's frames in table order, with their objects. The frames' parts are located
 * from their footers; a frame's objects are looked for first in the objects part of the same page
 * (the exporter writes a page's frames and objects together) and the other parts are read only
 * while a frame still lacks some of the objects its `objects` count promises.
 */
export async function previewCommit(
  storage: ObjectStore,
  commit: Pick<DatasetCommit, 'files' | 'prefix'>,
  window: { offset: number; limit: number },
): Promise<{ total: number; frames: Array<PreviewFrame & { items: PreviewObject[] }> }> {
  const frameParts = commitParts(storage, commit, 'frames');
  const counts = await partRowCounts(storage, frameParts);
  const total = counts.reduce((s, n) => s + n, 0);
  const frames: PreviewFrame[] = [];
  const pages = new Set<string>();
  let first = 0;
  for (const [i, part] of frameParts.entries()) {
    const rows = counts[i]!;
    const start = Math.max(window.offset - first, 0);
    const end = Math.min(window.offset + window.limit - first, rows);
    first += rows;
    if (start >= end) continue;
    const read = await readPart(await openPart(storage, part), {
      columns: PREVIEW_FRAME_COLUMNS,
      rowStart: start,
      rowEnd: end,
    });
    frames.push(...(read as unknown as PreviewFrame[]));
    pages.add(partFile(part));
  }

  const found = new Map<string, PreviewObject[]>(frames.map((f) => [f.frame_id, []]));
  const lacking = () => frames.some((f) => found.get(f.frame_id)!.length < f.objects);
  const objectParts = commitParts(storage, commit, 'objects');
  const samePageFirst = [
    ...objectParts.filter((p) => pages.has(partFile(p))),
    ...objectParts.filter((p) => !pages.has(partFile(p))),
  ];
  const filter = { frame_id: { $in: [...found.keys()] } };
  for (const part of samePageFirst) {
    if (!lacking()) break;
    const rows = await readPart(await openPart(storage, part), { columns: PREVIEW_OBJECT_COLUMNS, filter });
    for (const o of rows as unknown as PreviewObject[]) found.get(o.frame_id)?.push(o);
  }
  return { total, frames: frames.map((f) => ({ ...f, items: found.get(f.frame_id)! })) };
}

export interface VocabularyClass {
  /** The YOLO class index: position in the vocabulary. */
  index: number;
  class_id: number;
  name: string;
  l0: string;
  l1: string;
  /** Objects of the class in the commit; null for the live ontology's vocabulary. */
  count: number | null;
}

/**
 * The classes present in a commit's objects table, in YOLO index order: by class id ascending (the
 * exporter's data.yaml uses the same order), a class id exported under two names (a rename between
 * pages of a resumed export) once per name.
 */
export async function commitClasses(
  storage: ObjectStore,
  commit: Pick<DatasetCommit, 'files' | 'prefix'>,
): Promise<VocabularyClass[]> {
  const classes = new Map<string, Omit<VocabularyClass, 'index'> & { count: number }>();
  const parts = commitParts(storage, commit, 'objects');
  for await (const rows of readTable(storage, parts, { columns: ['class_id', 'class_name', 'l0', 'l1'] }))
    for (const r of rows) {
      const key = `${r.class_id}\u0000${r.class_name}`;
      const seen = classes.get(key);
      if (seen) seen.count++;
      else classes.set(key, { class_id: r.class_id, name: r.class_name, l0: r.l0, l1: r.l1, count: 1 });
    }
  return [...classes.values()]
    .sort((x, y) => x.class_id - y.class_id || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0))
    .map((c, index) => ({ index, ...c }));
}

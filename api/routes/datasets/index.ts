import { z } from 'zod';
import { commitLineage } from '../../../activities/datasets/lineage';
import {
  commitIdSchema,
  MAX_COMMITS_PAGE,
  blobHref,
  commitClasses,
  commitFiles,
  commitParts,
  findCommit,
  listCommits,
  previewCommit,
  readTable,
} from '../../../activities/datasets/read';
import { DIFF_COLUMNS, diffObjects } from '../../../core/datasets/diff';
import { NotFoundError } from '../../../core/errors';
import type { DatasetCommit } from '../../../generated/prisma/client';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';
import { addLakeRoutes } from './lake';

/** Largest preview page: each item costs a frame row and its objects. */
export const MAX_PREVIEW_LIMIT = 100;
/** Crop size the preview's object crops ask for. */
const PREVIEW_CROP_SIZE = 128;

const datasetName = z.string().min(1).max(200);
const ListQuery = z.strictObject({
  name: datasetName.optional(),
  cursor: z.string().max(512).optional(),
  limit: limitParam(50, MAX_COMMITS_PAGE),
});
const PreviewQuery = z.strictObject({
  commit_id: commitIdSchema,
  offset: z.coerce.number().int().min(0).max(1_000_000_000).default(0),
  limit: limitParam(20, MAX_PREVIEW_LIMIT),
});
const VocabularyQuery = z.strictObject({ commit_id: commitIdSchema.optional() });
const CommitQuery = z.strictObject({ commit_id: commitIdSchema });

const NOT_FOUND = { 404: 'no such commit' };

const commitHref = (id: string) => `/api/datasets/${id}`;

/** What every answer about a commit says of it. */
const commitCore = (c: DatasetCommit) => ({
  commit_id: c.commitId,
  name: c.name,
  version: c.version,
  parent_id: c.parentId,
  job_id: c.jobId,
  formats: c.formats,
  counts: c.counts,
  gate: c.gate,
  model_versions: c.modelVersions,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
});

const totalBytes = (c: DatasetCommit) => commitFiles(c).reduce((s, f) => s + f.size, 0);

/** A commit in a list: what tells versions apart, without its file list. */
const commitSummary = (c: DatasetCommit) => ({
  ...commitCore(c),
  files: commitFiles(c).length,
  bytes: totalBytes(c),
  sessions: c.sessionIds.length,
  href: commitHref(c.commitId),
});

/** Files and bytes per top-level folder (or root file) of the dataset. */
function filesByKind(c: DatasetCommit) {
  const kinds: Record<string, { files: number; bytes: number }> = {};
  for (const f of commitFiles(c)) {
    const top = f.path.split('/')[0]!;
    const kind = (kinds[top] ??= { files: 0, bytes: 0 });
    kind.files++;
    kind.bytes += f.size;
  }
  return kinds;
}

/** The `datasets` group's reads (docs/datasets-read.md); export and transfer routes live beside it. */
export function createDatasetsRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  // Literal paths are declared before `/api/datasets/{commit_id}`, which would otherwise take them.
  const group = new RouteGroup('datasets')
    .get(
      '/api/datasets',
      {
        summary: `Dataset commits newest first by keyset pagination (pass next_cursor back as cursor; limit at most ${MAX_COMMITS_PAGE}); ?name= keeps one dataset's versions`,
        access: 'annotator',
        query: ListQuery,
      },
      async ({ query }) => {
        const page = await listCommits(db, query);
        return { items: page.commits.map(commitSummary), limit: query.limit, next_cursor: page.nextCursor };
      },
    )
    .get(
      '/api/datasets/versions/{name}',
      {
        summary: 'Every version of a dataset name, oldest first, each with its parent',
        access: 'annotator',
        params: z.object({ name: datasetName }),
        statuses: { 404: 'no commit has this name' },
      },
      async ({ params }) => {
        const versions = await db.datasetCommit.findMany({
          where: { name: params.name },
          orderBy: { version: 'asc' },
        });
        if (!versions.length) throw new NotFoundError(`no dataset named ${params.name}`);
        return {
          name: params.name,
          latest: versions.at(-1)!.commitId,
          versions: versions.map(commitSummary),
        };
      },
    )
    .get(
      '/api/datasets/preview',
      {
        summary: `A window of a commit's frames (table order) with their objects' boxes and classes, and thumbnail hrefs; limit at most ${MAX_PREVIEW_LIMIT}`,
        access: 'annotator',
        query: PreviewQuery,
        statuses: NOT_FOUND,
      },
      async ({ query }) => {
        const commit = await findCommit(db, query.commit_id);
        const { total, frames } = await previewCommit(storage, commit, query);
        const next = query.offset + frames.length;
        return {
          commit_id: commit.commitId,
          total,
          offset: query.offset,
          limit: query.limit,
          next_offset: next < total ? next : null,
          items: frames.map(({ items, ...f }) => ({
            ...f,
            // The exported (redacted) image when the commit has it, else the frame's live redacted copy.
            thumbnail: f.image ? blobHref(commit.commitId, f.image) : `/api/frames/${f.frame_id}/image`,
            objects: items.map((o) => ({
              object_id: o.object_id,
              class_id: o.class_id,
              class_name: o.class_name,
              l1: o.l1,
              bbox: [o.x1, o.y1, o.x2, o.y2],
              conf: o.conf,
              source: o.source,
              state: o.state,
              crop: `/api/objects/${o.object_id}/crop?size=${PREVIEW_CROP_SIZE}`,
            })),
          })),
        };
      },
    )
    .get(
      '/api/datasets/vocabulary',
      {
        summary:
          "A commit's class vocabulary in YOLO index order (classes present, by class id) with counts, l0/l1 and ontology sources; without commit_id the live ontology's (every class not retired)",
        access: 'annotator',
        query: VocabularyQuery,
        statuses: NOT_FOUND,
      },
      async ({ query }) => {
        const commit = query.commit_id ? await findCommit(db, query.commit_id) : null;
        const live = await db.ontologyClass.findMany({
          where: commit ? {} : { retiredAt: null },
          orderBy: { id: 'asc' },
        });
        const liveById = new Map(live.map((c) => [c.id, c]));
        const classes = commit
          ? await commitClasses(storage, commit)
          : live.map((c, index) => ({
              index,
              class_id: c.id,
              name: c.name,
              l0: c.l0,
              l1: c.l1,
              count: null,
            }));
        return {
          commit_id: commit?.commitId ?? null,
          source: commit ? 'commit' : 'ontology',
          nc: classes.length,
          names: classes.map((c) => c.name),
          classes: classes.map((c) => {
            const now = liveById.get(c.class_id);
            return {
              ...c,
              ontology: now
                ? {
                    sources: now.sources,
                    parent_id: now.parentId,
                    current_name: now.name,
                    retired: now.retiredAt !== null,
                  }
                : null,
            };
          }),
        };
      },
    )
    .get(
      '/api/datasets/compile',
      {
        summary:
          "A commit's manifest: every file with its SHA-256, size and href, formats, split, counts, gate, predicate, sessions, model versions and parent",
        access: 'annotator',
        query: CommitQuery,
        statuses: NOT_FOUND,
      },
      async ({ query }) => {
        const c = await findCommit(db, query.commit_id);
        return {
          commit_id: c.commitId,
          name: c.name,
          version: c.version,
          files: commitFiles(c).map((f) => ({ ...f, href: blobHref(c.commitId, f.path) })),
          formats: c.formats,
          split: c.split,
          counts: c.counts,
          gate: c.gate,
          predicate: c.predicate,
          sessions: c.sessionIds,
          model_versions: c.modelVersions,
          parent: c.parentId,
          created_at: c.createdAt.toISOString(),
        };
      },
    );
  addLakeRoutes(group, deps);
  return group
    .get(
      '/api/datasets/{commit_id}',
      {
        summary:
          'One commit: everything but its certificate body, a summary of its files, and the download, certificate, manifest and lineage hrefs',
        access: 'annotator',
        params: z.object({ commit_id: commitIdSchema }),
        statuses: NOT_FOUND,
      },
      async ({ params }) => {
        const c = await findCommit(db, params.commit_id);
        return {
          ...commitCore(c),
          prefix: c.prefix,
          split: c.split,
          predicate: c.predicate,
          session_ids: c.sessionIds,
          shards: c.shards,
          signature: c.signature,
          key_id: c.keyId,
          files: { count: commitFiles(c).length, bytes: totalBytes(c), by_kind: filesByKind(c) },
          download: `/api/datasets/${c.commitId}/download`,
          certificate: `/api/export/${c.commitId}/certificate`,
          manifest: `/api/datasets/compile?commit_id=${c.commitId}`,
          lineage: `/api/datasets/${c.commitId}/lineage`,
        };
      },
    )
    .get(
      '/api/datasets/{a_id}/diff/{b_id}',
      {
        summary:
          'Objects added, removed and changed (version, class, state or box at 0.01 px) from commit a to commit b, in total and by class, with the first 50 ids of each kind',
        access: 'annotator',
        params: z.object({ a_id: commitIdSchema, b_id: commitIdSchema }),
        statuses: { 404: 'no such commit (a or b)' },
      },
      async ({ params }) => {
        const [a, b] = await Promise.all([findCommit(db, params.a_id), findCommit(db, params.b_id)]);
        const objectsOf = (c: DatasetCommit) => (c.counts as { objects?: unknown }).objects;
        const [na, nb] = [objectsOf(a), objectsOf(b)];
        // Hold the smaller side in memory (about 100 bytes an object), stream the other.
        const holdB = typeof na === 'number' && typeof nb === 'number' && nb < na;
        const rows = (c: DatasetCommit) =>
          readTable(storage, commitParts(storage, c, 'objects'), { columns: DIFF_COLUMNS });
        const diff = holdB
          ? await diffObjects(rows(b), rows(a), 'b')
          : await diffObjects(rows(a), rows(b), 'a');
        const ref = (c: DatasetCommit) => ({
          commit_id: c.commitId,
          name: c.name,
          version: c.version,
          created_at: c.createdAt.toISOString(),
        });
        return { a: ref(a), b: ref(b), ...diff };
      },
    )
    .get(
      '/api/datasets/{commit_id}/lineage',
      {
        summary:
          'Where a commit came from: its sessions with frame counts, review activity on its objects, the model versions that labelled them, the export job and who ran it, its parent and children (same answer as GET /api/lineage/dataset/{commit_id})',
        access: 'annotator',
        params: z.object({ commit_id: commitIdSchema }),
        statuses: NOT_FOUND,
      },
      async ({ params }) => commitLineage(deps, await findCommit(db, params.commit_id)),
    );
}

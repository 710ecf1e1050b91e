import { NotFoundError } from '../../core/errors';
import { Prisma, type DatasetCommit } from '../../generated/prisma/client';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { commitParts, readTable } from './read';

/**
 * Lineage (docs/datasets-read.md): where a dataset commit came from (sessions, frames, the review
 * activity on its objects, the models that labelled its sessions, the export and its parent), which
 * commits hold a session, and what a model version touched. Training does not exist yet, so no
 * commit is ever "trained on" by a model.
 */

/** Object ids per reviews query: a bounded `= ANY($1)` array. */
const REVIEW_BATCH = 5000;
/** Lists of commits and jobs in an answer are cut here, newest first, and say so. */
export const LINEAGE_LIST_LIMIT = 500;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

const commitRefSelect = {
  commitId: true,
  name: true,
  version: true,
  parentId: true,
  createdAt: true,
  createdBy: true,
} as const;
type CommitRef = Prisma.DatasetCommitGetPayload<{ select: typeof commitRefSelect }>;

export const commitRefOut = (c: CommitRef) => ({
  commit_id: c.commitId,
  name: c.name,
  version: c.version,
  parent_id: c.parentId,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
  href: `/api/datasets/${c.commitId}`,
});

const jobSelect = {
  id: true,
  sessionId: true,
  mode: true,
  state: true,
  paths: true,
  createdAt: true,
  finishedAt: true,
} as const;
type JobRef = Prisma.AutolabelJobGetPayload<{ select: typeof jobSelect }>;

/**
 * The model versions an auto-label job recorded: the values of its `paths` (activities/autolabel
 * store.ts modelsThatRan: the closed-set model as `file@sha256-prefix`, an endpoint's model by the
 * name it answered with, several joined by `, `).
 */
export function jobModels(paths: Prisma.JsonValue): string[] {
  if (!paths || typeof paths !== 'object' || Array.isArray(paths)) return [];
  return Object.values(paths).flatMap((v) => (typeof v === 'string' ? v.split(', ').filter(Boolean) : []));
}

const jobOut = (j: JobRef) => ({
  job_id: j.id,
  session_id: j.sessionId,
  mode: j.mode,
  state: j.state,
  models: j.paths,
  model_versions: jobModels(j.paths),
  created_at: j.createdAt.toISOString(),
  finished_at: j.finishedAt?.toISOString() ?? null,
});

/** Review activity on a set of objects, summed over bounded batches of their ids. */
class ReviewTally {
  total = 0;
  sinceCommit = 0;
  objectsReviewed = 0;
  readonly byAction: Record<string, number> = {};
  private readonly reviewers = new Map<
    string,
    { reviewer_id: string | null; reviewer: string; reviews: number }
  >();
  private pending: string[] = [];

  constructor(
    private readonly db: Db,
    private readonly commitAt: Date,
  ) {}

  async add(objectId: string): Promise<void> {
    // Anything that is not a UUID names no object of this database, so it has no reviews.
    if (!UUID.test(objectId)) return;
    this.pending.push(objectId);
    if (this.pending.length >= REVIEW_BATCH) await this.flush();
  }

  async flush(): Promise<void> {
    const ids = this.pending;
    this.pending = [];
    if (!ids.length) return;
    const [groups, objects] = await Promise.all([
      this.db.$queryRaw<
        Array<{ action: string; reviewer_id: string | null; reviewer: string; n: number; since: number }>
      >`
        SELECT action, reviewer_id::text AS reviewer_id, reviewer, count(*)::int AS n,
               (count(*) FILTER (WHERE created_at > ${this.commitAt}))::int AS since
          FROM reviews WHERE object_id = ANY(${ids}::uuid[])
         GROUP BY action, reviewer_id, reviewer`,
      this.db.$queryRaw<Array<{ n: number }>>`
        SELECT count(DISTINCT object_id)::int AS n FROM reviews WHERE object_id = ANY(${ids}::uuid[])`,
    ]);
    // The batches hold disjoint ids, so the distinct counts add up.
    this.objectsReviewed += objects[0]?.n ?? 0;
    for (const g of groups) {
      this.total += g.n;
      this.sinceCommit += g.since;
      this.byAction[g.action] = (this.byAction[g.action] ?? 0) + g.n;
      const key = g.reviewer_id ?? `name:${g.reviewer}`;
      const seen = this.reviewers.get(key) ?? {
        reviewer_id: g.reviewer_id,
        reviewer: g.reviewer,
        reviews: 0,
      };
      seen.reviews += g.n;
      this.reviewers.set(key, seen);
    }
  }

  out() {
    return {
      total: this.total,
      since_commit: this.sinceCommit,
      objects_reviewed: this.objectsReviewed,
      by_action: this.byAction,
      distinct_reviewers: this.reviewers.size,
      reviewers: [...this.reviewers.values()].sort((x, y) => y.reviews - x.reviews),
    };
  }
}

const increment = (counts: Map<string, number>, key: string) => counts.set(key, (counts.get(key) ?? 0) + 1);

/**
 * A commit's lineage. Frames and objects per session come from the commit's own tables (what was
 * exported, not what the session holds now); review activity counts every `reviews` row of the
 * commit's objects, with those written after the commit apart; the auto-label jobs are those of its
 * sessions created before the commit.
 */
export async function commitLineage(deps: { db: Db; storage: ObjectStore }, commit: DatasetCommit) {
  const { db, storage } = deps;
  const framesBySession = new Map<string, number>();
  for await (const rows of readTable(storage, commitParts(storage, commit, 'frames'), {
    columns: ['session_id'],
  }))
    for (const r of rows) increment(framesBySession, r.session_id);

  const objectsBySession = new Map<string, number>();
  const reviews = new ReviewTally(db, commit.createdAt);
  for await (const rows of readTable(storage, commitParts(storage, commit, 'objects'), {
    columns: ['object_id', 'session_id'],
  }))
    for (const r of rows) {
      increment(objectsBySession, r.session_id);
      await reviews.add(r.object_id);
    }
  await reviews.flush();

  const sessionIds = [
    ...new Set([...commit.sessionIds, ...framesBySession.keys(), ...objectsBySession.keys()]),
  ].filter((id) => UUID.test(id));
  const [sessions, jobs, exportJob, exporter, parent, children] = await Promise.all([
    db.session.findMany({
      where: { id: { in: sessionIds } },
      select: { id: true, name: true, state: true, vehicleId: true },
    }),
    db.autolabelJob.findMany({
      where: { sessionId: { in: sessionIds }, createdAt: { lte: commit.createdAt } },
      orderBy: { createdAt: 'desc' },
      take: LINEAGE_LIST_LIMIT + 1,
      select: jobSelect,
    }),
    db.exportJob.findUnique({ where: { id: commit.jobId } }),
    commit.createdBy
      ? db.user.findUnique({ where: { id: commit.createdBy }, select: { id: true, email: true, name: true } })
      : null,
    commit.parentId
      ? db.datasetCommit.findUnique({ where: { commitId: commit.parentId }, select: commitRefSelect })
      : null,
    db.datasetCommit.findMany({
      where: { parentId: commit.commitId },
      orderBy: { version: 'asc' },
      select: commitRefSelect,
    }),
  ]);
  const sessionById = new Map(sessions.map((s) => [s.id, s]));
  const shownJobs = jobs.slice(0, LINEAGE_LIST_LIMIT);
  const modelVersions = new Set([...commit.modelVersions, ...shownJobs.flatMap((j) => jobModels(j.paths))]);
  return {
    commit: commitRefOut(commit),
    parent: parent
      ? commitRefOut(parent)
      : commit.parentId
        ? { commit_id: commit.parentId, missing: true }
        : null,
    children: children.map(commitRefOut),
    export: exportJob
      ? {
          job_id: exportJob.id,
          state: exportJob.state,
          slice_id: exportJob.sliceId,
          formats: exportJob.formats,
          gate_mode: exportJob.gateMode,
          created_by: exportJob.createdBy,
          created_at: exportJob.createdAt.toISOString(),
          finished_at: exportJob.finishedAt?.toISOString() ?? null,
        }
      : null,
    exported_by: exporter
      ? { user_id: exporter.id, email: exporter.email, name: exporter.name }
      : { user_id: commit.createdBy, email: null, name: null },
    frames: [...framesBySession.values()].reduce((s, n) => s + n, 0),
    objects: [...objectsBySession.values()].reduce((s, n) => s + n, 0),
    sessions: sessionIds.map((id) => {
      const s = sessionById.get(id);
      return {
        session_id: id,
        name: s?.name ?? null,
        state: s?.state ?? null,
        vehicle_id: s?.vehicleId ?? null,
        // A session erased since the export is still named by the commit, without its row.
        exists: Boolean(s),
        frames: framesBySession.get(id) ?? 0,
        objects: objectsBySession.get(id) ?? 0,
      };
    }),
    reviews: reviews.out(),
    model_versions: [...modelVersions].sort(),
    autolabel_jobs: shownJobs.map(jobOut),
    autolabel_jobs_truncated: jobs.length > LINEAGE_LIST_LIMIT,
  };
}

/** The commits holding a session (newest first) and the auto-label jobs that labelled it. */
export async function sessionLineage(db: Db, sessionId: string) {
  const [session, commits, jobs] = await Promise.all([
    db.session.findUnique({ where: { id: sessionId }, select: { id: true, name: true, state: true } }),
    db.datasetCommit.findMany({
      where: { sessionIds: { has: sessionId } },
      orderBy: [{ createdAt: 'desc' }, { commitId: 'desc' }],
      take: LINEAGE_LIST_LIMIT + 1,
      select: commitRefSelect,
    }),
    db.autolabelJob.findMany({
      where: { sessionId },
      orderBy: { createdAt: 'desc' },
      take: LINEAGE_LIST_LIMIT + 1,
      select: jobSelect,
    }),
  ]);
  // An erased session that exported commits still name keeps its lineage.
  if (!session && !commits.length) throw new NotFoundError(`no session ${sessionId}, and no commit holds it`);
  return {
    session_id: sessionId,
    session: session ? { name: session.name, state: session.state } : null,
    commits: commits.slice(0, LINEAGE_LIST_LIMIT).map(commitRefOut),
    commits_truncated: commits.length > LINEAGE_LIST_LIMIT,
    autolabel_jobs: jobs.slice(0, LINEAGE_LIST_LIMIT).map(jobOut),
    autolabel_jobs_truncated: jobs.length > LINEAGE_LIST_LIMIT,
  };
}

/**
 * What a model version touched: the commits that record it among their model versions and the
 * sessions its auto-label jobs labelled. `trained_on` stays null until training runs are recorded.
 * A version nothing mentions answers with empty lists: model versions have no registry to 404 from.
 */
export async function modelLineage(db: Db, modelVersion: string) {
  const [commits, jobs] = await Promise.all([
    db.datasetCommit.findMany({
      where: { modelVersions: { has: modelVersion } },
      orderBy: [{ createdAt: 'desc' }, { commitId: 'desc' }],
      take: LINEAGE_LIST_LIMIT + 1,
      select: commitRefSelect,
    }),
    // jsonb_each refuses a non-object; CASE keeps it from seeing one.
    db.$queryRaw<Array<{ id: string }>>`
      SELECT j.id::text AS id FROM autolabel_jobs j
       WHERE CASE WHEN jsonb_typeof(j.paths) = 'object' THEN EXISTS (
               SELECT 1 FROM jsonb_each(j.paths) p
                WHERE jsonb_typeof(p.value) = 'string'
                  AND ${modelVersion} = ANY(string_to_array(p.value #>> '{}', ', '))) ELSE false END
       ORDER BY j.created_at DESC
       LIMIT ${LINEAGE_LIST_LIMIT + 1}`,
  ]);
  const jobRows = await db.autolabelJob.findMany({
    where: { id: { in: jobs.slice(0, LINEAGE_LIST_LIMIT).map((j) => j.id) } },
    orderBy: { createdAt: 'desc' },
    select: jobSelect,
  });
  const jobsBySession = new Map<string, JobRef[]>();
  for (const j of jobRows) jobsBySession.set(j.sessionId, [...(jobsBySession.get(j.sessionId) ?? []), j]);
  const sessions = new Map(
    (
      await db.session.findMany({
        where: { id: { in: [...jobsBySession.keys()] } },
        select: { id: true, name: true, state: true },
      })
    ).map((s) => [s.id, s]),
  );
  return {
    model_version: modelVersion,
    trained_on: null,
    note: 'no training runs are recorded yet',
    commits: commits.slice(0, LINEAGE_LIST_LIMIT).map(commitRefOut),
    commits_truncated: commits.length > LINEAGE_LIST_LIMIT,
    autolabelled_sessions: [...jobsBySession].map(([sessionId, sessionJobs]) => ({
      session_id: sessionId,
      name: sessions.get(sessionId)?.name ?? null,
      state: sessions.get(sessionId)?.state ?? null,
      jobs: sessionJobs.map(jobOut),
    })),
    autolabel_jobs_truncated: jobs.length > LINEAGE_LIST_LIMIT,
  };
}

import { NotFoundError } from '../../core/errors';
import type { Prisma } from '../../generated/prisma/client';
import {
  commitLineage,
  commitRefOut,
  LINEAGE_LIST_LIMIT,
  modelLineage,
  sessionLineage,
} from '../datasets/lineage';
import { commitParts, findCommit, readTable } from '../datasets/read';
import type { Db } from '../db';
import type { ObjectStore } from '../storage/object-store';
import { erasureOut } from './erasure';

/**
 * Lineage of any governed subject (docs/governance-reads.md): what it came from and what used it. Built on
 * the lineage of the `campaigns` group (activities/datasets/lineage.ts) for sessions, commits and
 * models, with what that leaves out: the training jobs and models a commit fed, the model a
 * training produced and its parent, and objects.
 */

export const LINEAGE_KINDS = ['session', 'commit', 'model', 'object'] as const;
export type LineageSubject = { kind: (typeof LINEAGE_KINDS)[number]; id: string };

/** Commits an object's lineage opens to find it in their tables, newest first. */
export const OBJECT_COMMITS_SCANNED = 100;

type Deps = { db: Db; storage: ObjectStore };

export const lineageHref = (kind: LineageSubject['kind'], id: string) => `/api/govern/lineage/${kind}:${id}`;

const trainingSelect = {
  id: true,
  status: true,
  datasetCommitId: true,
  parentVersion: true,
  modelVersion: true,
  createdAt: true,
} as const;
type TrainingRef = Prisma.TrainingJobGetPayload<{ select: typeof trainingSelect }>;
const trainingOut = (j: TrainingRef) => ({
  job_id: j.id,
  status: j.status,
  dataset_commit_id: j.datasetCommitId,
  parent_model_version: j.parentVersion,
  model_version: j.modelVersion,
  created_at: j.createdAt.toISOString(),
  href: `/api/training/${j.id}`,
});

export const modelSelect = {
  modelVersion: true,
  state: true,
  origin: true,
  parentVersion: true,
  datasetCommitId: true,
  trainingJobId: true,
  createdAt: true,
} as const;
type ModelRef = Prisma.ModelGetPayload<{ select: typeof modelSelect }>;
export const modelOut = (m: ModelRef) => ({
  model_version: m.modelVersion,
  state: m.state,
  origin: m.origin,
  parent_version: m.parentVersion,
  dataset_commit_id: m.datasetCommitId,
  training_job_id: m.trainingJobId,
  created_at: m.createdAt.toISOString(),
  lineage: lineageHref('model', m.modelVersion),
});

/** Training jobs and models matching `where`, newest first, cut at the list limit (and saying so). */
async function trainingAndModels(db: Db, jobs: Prisma.TrainingJobWhereInput, models: Prisma.ModelWhereInput) {
  const [j, m] = await Promise.all([
    db.trainingJob.findMany({
      where: jobs,
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: LINEAGE_LIST_LIMIT + 1,
      select: trainingSelect,
    }),
    db.model.findMany({
      where: models,
      orderBy: [{ createdAt: 'desc' }, { modelVersion: 'asc' }],
      take: LINEAGE_LIST_LIMIT + 1,
      select: modelSelect,
    }),
  ]);
  return {
    training_jobs: j.slice(0, LINEAGE_LIST_LIMIT).map(trainingOut),
    training_jobs_truncated: j.length > LINEAGE_LIST_LIMIT,
    models: m.slice(0, LINEAGE_LIST_LIMIT).map(modelOut),
    models_truncated: m.length > LINEAGE_LIST_LIMIT,
  };
}

async function ofSession(deps: Deps, id: string) {
  const [erasures, session] = await Promise.all([
    deps.db.erasure.findMany({
      where: { sessionId: id },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: LINEAGE_LIST_LIMIT,
    }),
    deps.db.session.findUnique({ where: { id } }),
  ]);
  // An erased session that no commit held is known by its erasures alone: their proof is its lineage.
  const base = await sessionLineage(deps.db, id).catch((err: unknown) => {
    if (err instanceof NotFoundError && erasures.length)
      return { commits: [], commits_truncated: false, autolabel_jobs: [], autolabel_jobs_truncated: false };
    throw err;
  });
  const commitIds = base.commits.map((c) => c.commit_id);
  const fed = await trainingAndModels(
    deps.db,
    { datasetCommitId: { in: commitIds } },
    { datasetCommitId: { in: commitIds } },
  );
  return {
    came_from: {
      // An erased session keeps its lineage through the commits that name it, without its row.
      session: session
        ? {
            name: session.name,
            state: session.state,
            source_kind: session.sourceKind,
            source_uri: session.sourceUri,
            content_hash: session.contentHash,
            vehicle_id: session.vehicleId,
            frames: session.frameCount,
            created_at: session.createdAt.toISOString(),
            consent_status: session.consentStatus,
            legal_basis: session.legalBasis,
            retention_until: session.retentionUntil?.toISOString() ?? null,
          }
        : null,
      exists: Boolean(session),
      erasures: erasures.map(erasureOut),
    },
    used_by: {
      commits: base.commits,
      commits_truncated: base.commits_truncated,
      autolabel_jobs: base.autolabel_jobs,
      autolabel_jobs_truncated: base.autolabel_jobs_truncated,
      ...fed,
    },
  };
}

export async function ofCommit(deps: Deps, id: string) {
  const commit = await findCommit(deps.db, id);
  const { commit: _self, children, ...cameFrom } = await commitLineage(deps, commit);
  return {
    came_from: { ...cameFrom, erased_session_ids: commit.erasedSessionIds },
    used_by: {
      children,
      ...(await trainingAndModels(deps.db, { datasetCommitId: id }, { datasetCommitId: id })),
    },
  };
}

export async function ofModel(deps: Deps, version: string) {
  const [base, model, trainedBy] = await Promise.all([
    modelLineage(deps.db, version),
    deps.db.model.findUnique({ where: { modelVersion: version }, select: modelSelect }),
    deps.db.trainingJob.findFirst({
      where: { modelVersion: version },
      orderBy: { createdAt: 'desc' },
      select: trainingSelect,
    }),
  ]);
  if (!model && !trainedBy && !base.commits.length && !base.autolabelled_sessions.length)
    throw new NotFoundError(
      `no model ${version}: no registry row, training job, commit or auto-label job names it`,
    );
  const trainedOn = model?.datasetCommitId ?? trainedBy?.datasetCommitId ?? null;
  const parent = model?.parentVersion ?? trainedBy?.parentVersion ?? null;
  return {
    came_from: {
      model: model ? modelOut(model) : null,
      parent_version: parent,
      parent_lineage: parent ? lineageHref('model', parent) : null,
      trained_on: trainedOn,
      trained_on_lineage: trainedOn ? lineageHref('commit', trainedOn) : null,
      training_job: trainedBy ? trainingOut(trainedBy) : null,
    },
    used_by: {
      commits: base.commits,
      commits_truncated: base.commits_truncated,
      autolabelled_sessions: base.autolabelled_sessions,
      autolabel_jobs_truncated: base.autolabel_jobs_truncated,
      // Models fine-tuned from this one, and the jobs that did (or are doing) it.
      ...(await trainingAndModels(deps.db, { parentVersion: version }, { parentVersion: version })),
    },
  };
}

/**
 * An object's lineage: its frame and session, who or what proposed it (provenance), the reviews
 * that changed it, and the dataset commits whose tables hold it. Only commits of its session can;
 * the newest OBJECT_COMMITS_SCANNED of them are opened, and the answer says when there were more.
 */
async function ofObject(deps: Deps, id: string) {
  const { db, storage } = deps;
  const object = await db.annoObject.findUnique({
    where: { id },
    include: {
      class: { select: { name: true } },
      frame: { select: { id: true, sessionId: true, index: true, timestampMs: true } },
      provenance: { orderBy: { createdAt: 'desc' }, take: LINEAGE_LIST_LIMIT },
    },
  });
  if (!object) throw new NotFoundError(`no object ${id}`);
  const sessionId = object.frame.sessionId;
  const [session, reviews, candidates] = await Promise.all([
    db.session.findUnique({ where: { id: sessionId }, select: { name: true, consentStatus: true } }),
    db.review.findMany({
      where: { objectId: id },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
      take: LINEAGE_LIST_LIMIT + 1,
    }),
    db.datasetCommit.findMany({
      where: { sessionIds: { has: sessionId } },
      orderBy: [{ createdAt: 'desc' }, { commitId: 'desc' }],
      take: OBJECT_COMMITS_SCANNED + 1,
    }),
  ]);
  const holding = [];
  for (const commit of candidates.slice(0, OBJECT_COMMITS_SCANNED)) {
    for await (const rows of readTable(storage, commitParts(storage, commit, 'objects'), {
      columns: ['object_id', 'state', 'version'],
      filter: { object_id: { $eq: id } },
    }))
      if (rows.length) {
        holding.push({
          ...commitRefOut(commit),
          exported_state: rows[0]!.state,
          exported_version: rows[0]!.version,
        });
        break;
      }
  }
  return {
    came_from: {
      class_name: object.class.name,
      source: object.source,
      state: object.state,
      version: object.version,
      created_at: object.createdAt.toISOString(),
      labelling_job_id: object.jobId,
      frame: {
        frame_id: object.frame.id,
        index: object.frame.index,
        timestamp_ms: object.frame.timestampMs,
      },
      session: {
        session_id: sessionId,
        name: session?.name ?? null,
        consent_status: session?.consentStatus ?? null,
        lineage: lineageHref('session', sessionId),
      },
      provenance: object.provenance.map((p) => ({
        paths: p.paths,
        raw_confidences: p.rawConfidences,
        agreement: p.agreement,
        entropy: p.entropy,
        quality_flags: p.qualityFlags,
        created_at: p.createdAt.toISOString(),
      })),
      reviews: reviews.slice(0, LINEAGE_LIST_LIMIT).map((r) => ({
        review_id: r.id,
        action: r.action,
        reviewer_id: r.reviewerId,
        reviewer: r.reviewer,
        created_at: r.createdAt.toISOString(),
      })),
      reviews_truncated: reviews.length > LINEAGE_LIST_LIMIT,
    },
    used_by: {
      commits: holding,
      commits_scanned: Math.min(candidates.length, OBJECT_COMMITS_SCANNED),
      commits_truncated: candidates.length > OBJECT_COMMITS_SCANNED,
    },
  };
}

const BY_KIND = { session: ofSession, commit: ofCommit, model: ofModel, object: ofObject } as const;

export async function governLineage(deps: Deps, subject: LineageSubject) {
  return {
    subject: `${subject.kind}:${subject.id}`,
    kind: subject.kind,
    ...(await BY_KIND[subject.kind](deps, subject.id)),
  };
}

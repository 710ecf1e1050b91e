import { commitFrameIds, retrainDue } from '../../core/activelearn/loop';
import { ConflictError, DomainError, RefusedError } from '../../core/errors';
import { FINISHED_STATUSES } from '../../core/training-jobs/config';
import type { ActiveLearnRetrain, DatasetCommit, TrainingJob } from '../../generated/prisma/client';
import { commitFiles, findCommit } from '../datasets/read';
import type { Db } from '../db';
import { currentChampion, type ArtifactDeps } from '../models/artifacts';

/**
 * The active-learning loop (docs/activelearn.md): what review has decided of each batch since it was
 * made, the labels new since the last retrain, the champion, and the retrains the loop started.
 *
 * An object of a batch is decided by its first review after the batch was made, or by a person
 * deleting it (audit `object.deleted` with an actor); a frame is decided when every object it was
 * picked for is. An auto-label re-run that replaces the frame's machine objects decides nothing.
 */

/** Batches the loop answer lists; the totals count every batch. */
export const LOOP_BATCHES_SHOWN = 20;

/** Serialises retrain starts, so two racing requests cannot both start one. */
const RETRAIN_LOCK = 0x61_6c_72_74; // 'alrt'

interface FrameDecision {
  batch_id: string;
  frame_id: string;
  objects: number;
  decided: number;
  /** When its last object was decided; meaningful once every object is. */
  decided_at: Date | null;
  /** Its objects decided after `since` (the last retrain). */
  new_objects: number;
}

async function frameDecisions(db: Db, since: Date | null, batchId?: string): Promise<FrameDecision[]> {
  const rows = await db.$queryRaw<
    Array<{
      batch_id: string;
      frame_id: string;
      objects: bigint;
      decided: bigint;
      decided_at: Date | null;
      new_objects: bigint;
    }>
  >`
    WITH picks AS (
      SELECT b.id AS batch_id, b.created_at AS batch_at, f.frame_id, oid
        FROM active_learning_batches b
        JOIN active_learning_batch_frames f ON f.batch_id = b.id
        CROSS JOIN LATERAL unnest(f.object_ids) AS oid
       WHERE ${batchId ?? null}::uuid IS NULL OR b.id = ${batchId ?? null}::uuid
    ), decided AS (
      SELECT p.batch_id, p.frame_id,
             LEAST(
               (SELECT min(r.created_at) FROM reviews r WHERE r.object_id = p.oid AND r.created_at >= p.batch_at),
               (SELECT min(a.created_at) FROM audit_log a
                 WHERE a.subject_type = 'object' AND a.subject_id = p.oid::text AND a.action = 'object.deleted'
                   AND a.actor_id IS NOT NULL AND a.created_at >= p.batch_at)
             ) AS decided_at
        FROM picks p
    )
    SELECT batch_id::text, frame_id::text, count(*) AS objects, count(decided_at) AS decided,
           max(decided_at) AS decided_at,
           count(*) FILTER (WHERE decided_at > ${since ?? new Date(0)}::timestamptz) AS new_objects
      FROM decided GROUP BY batch_id, frame_id`;
  return rows.map((r) => ({
    ...r,
    objects: Number(r.objects),
    decided: Number(r.decided),
    new_objects: Number(r.new_objects),
  }));
}

const isDecided = (f: FrameDecision): boolean => f.objects > 0 && f.decided === f.objects;

/** How far review has got with one batch: its frames, and those whose every object a person has decided. */
export async function batchProgress(db: Db, batchId: string): Promise<{ frames: number; decided: number }> {
  const frames = await frameDecisions(db, null, batchId);
  return { frames: frames.length, decided: frames.filter(isDecided).length };
}

/** Frames decided after `since`: the labels a retrain has not seen. */
const newlyDecided = (frames: readonly FrameDecision[], since: Date | null): FrameDecision[] =>
  frames.filter((f) => isDecided(f) && (!since || f.decided_at! > since));

async function lastRetrain(db: Db): Promise<(ActiveLearnRetrain & { trainingJob: TrainingJob }) | null> {
  return db.activeLearnRetrain.findFirst({
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    include: { trainingJob: true },
  });
}

/** A retrain the loop started whose job has not finished. */
async function runningRetrain(db: Pick<Db, 'activeLearnRetrain'>, exceptJobId?: string) {
  return db.activeLearnRetrain.findFirst({
    where: {
      trainingJob: { status: { notIn: [...FINISHED_STATUSES] } },
      ...(exceptJobId ? { trainingJobId: { not: exceptJobId } } : {}),
    },
    orderBy: { createdAt: 'desc' },
  });
}

const retrainOut = (r: ActiveLearnRetrain & { trainingJob: TrainingJob }) => ({
  job_id: r.trainingJobId,
  status: r.trainingJob.status,
  model_version: r.trainingJob.modelVersion,
  parent_model_version: r.trainingJob.parentVersion,
  dataset_commit_id: r.datasetCommitId,
  labelled_frames: r.labelledFrames,
  created_at: r.createdAt.toISOString(),
  job: `/api/training/${r.trainingJobId}`,
});

/** The champion the next challenger is measured against; null with the reason when it cannot be had. */
async function champion(deps: ArtifactDeps) {
  try {
    const m = await currentChampion(deps, 'detection');
    return {
      model_version: m.modelVersion,
      origin: m.origin,
      promoted_at: m.promotedAt?.toISOString() ?? null,
    };
  } catch (err) {
    if (err instanceof DomainError) return { model_version: null, reason: err.message };
    throw err;
  }
}

/** GET /api/activelearn/loop. */
export async function loopState(deps: ArtifactDeps) {
  const { db } = deps;
  const last = await lastRetrain(db);
  const since = last?.createdAt ?? null;
  const [frames, batches, running] = await Promise.all([
    frameDecisions(db, since),
    db.activeLearnBatch.findMany({
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      select: { id: true, createdAt: true, routeToReview: true, _count: { select: { frames: true } } },
    }),
    runningRetrain(db),
  ]);
  const byBatch = new Map<string, FrameDecision[]>();
  for (const f of frames) byBatch.set(f.batch_id, [...(byBatch.get(f.batch_id) ?? []), f]);
  const summaries = batches.map((b) => {
    const fs = byBatch.get(b.id) ?? [];
    const decidedFrames = fs.filter(isDecided).length;
    return {
      batch_id: b.id,
      created_at: b.createdAt.toISOString(),
      route_to_review: b.routeToReview,
      frames: b._count.frames,
      frames_decided: decidedFrames,
      objects: fs.reduce((n, f) => n + f.objects, 0),
      objects_decided: fs.reduce((n, f) => n + f.decided, 0),
      complete: b._count.frames > 0 && decidedFrames === b._count.frames,
      since_last_retrain: !since || b.createdAt > since,
    };
  });
  const fresh = newlyDecided(frames, since);
  const newFrames = new Set(fresh.map((f) => f.frame_id)).size;
  const sinceBatches = summaries.filter((b) => b.since_last_retrain);
  const verdict = retrainDue({
    runningJobId: running?.trainingJobId ?? null,
    newFrames,
    batchesSince: sinceBatches.length,
    batchesDecidedSince: sinceBatches.filter((b) => b.complete).length,
  });
  return {
    batches: summaries.slice(0, LOOP_BATCHES_SHOWN),
    batches_total: summaries.length,
    labels: {
      frames_picked: frames.length,
      frames_decided: frames.filter(isDecided).length,
      objects_decided: frames.reduce((n, f) => n + f.decided, 0),
      new_frames: newFrames,
      new_objects: frames.reduce((n, f) => n + f.new_objects, 0),
      since: since?.toISOString() ?? null,
    },
    champion: await champion(deps),
    retrain: {
      due: verdict.due,
      reason: verdict.reason,
      running: running ? running.trainingJobId : null,
      last: last ? retrainOut(last) : null,
    },
  };
}

export interface RetrainPlan {
  commit: DatasetCommit;
  /** Frames decided since the last retrain, before the commit was made, whose images it holds. */
  frameIds: string[];
}

/**
 * What a retrain would train on, or the refusal by name: 409 while a loop retrain runs; 422 when no
 * batch frame was decided since the last retrain, when there is no commit to train on, or when the
 * commit holds none of the newly decided frames as they were decided (made before their review).
 * The commit is the one named, else the newest.
 */
export async function planRetrain(db: Db, commitId: string | undefined): Promise<RetrainPlan> {
  const running = await runningRetrain(db);
  if (running)
    throw new ConflictError(`a retrain is running: training job ${running.trainingJobId}`, {
      job_id: running.trainingJobId,
    });
  const since = (await lastRetrain(db))?.createdAt ?? null;
  const fresh = newlyDecided(await frameDecisions(db, since), since);
  if (!fresh.length)
    throw new RefusedError(
      `nothing new is labelled: no batch frame was decided by review ${since ? `since the last retrain (${since.toISOString()})` : 'yet'}; review a batch first (POST /api/activelearn/select with route_to_review)`,
      { reason: 'nothing_new', since: since?.toISOString() ?? null },
    );
  const commit = commitId
    ? await findCommit(db, commitId)
    : await db.datasetCommit.findFirst({ orderBy: [{ createdAt: 'desc' }, { commitId: 'desc' }] });
  if (!commit)
    throw new RefusedError(
      `no dataset commit to train on: export the ${fresh.length} newly labelled frames first (POST /api/export)`,
      { reason: 'no_commit', new_frames: fresh.length },
    );
  const held = commitFrameIds(commitFiles(commit).map((f) => f.path));
  const frameIds = [
    ...new Set(
      fresh.filter((f) => f.decided_at! <= commit.createdAt && held.has(f.frame_id)).map((f) => f.frame_id),
    ),
  ].sort();
  if (!frameIds.length)
    throw new RefusedError(
      `dataset commit ${commit.commitId} holds none of the ${fresh.length} frames labelled since the last retrain as they were labelled: export them again after their review`,
      { reason: 'commit_without_new_labels', dataset_commit_id: commit.commitId, new_frames: fresh.length },
    );
  return { commit, frameIds };
}

/**
 * Records a retrain beside its job, under a lock: a retrain that another request started meanwhile
 * is a 409 (and the caller's job goes again with the failed start).
 */
export async function recordRetrain(
  db: Db,
  input: { jobId: string; plan: RetrainPlan; actorId: string },
): Promise<void> {
  await db.$transaction(async (tx) => {
    await tx.$executeRaw`SELECT pg_advisory_xact_lock(${RETRAIN_LOCK}::bigint)`;
    const other = await runningRetrain(tx, input.jobId);
    if (other) throw new ConflictError(`a retrain is running: training job ${other.trainingJobId}`);
    await tx.activeLearnRetrain.create({
      data: {
        trainingJobId: input.jobId,
        datasetCommitId: input.plan.commit.commitId,
        labelledFrames: input.plan.frameIds.length,
        createdBy: input.actorId,
      },
    });
  });
}

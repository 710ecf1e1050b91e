import { ConflictError, DomainError, InputError, NotFoundError, RefusedError } from '../../core/errors';
import { idCursorArgs, idPage } from '../../core/pagination';
import type { ErrorKind } from '../../core/errordetect';
import { reviewEffect } from '../../core/review/actions';
import { Prisma, type ErrorCandidate } from '../../generated/prisma/client';
import type { MaskStore } from '../annotations/masks';
import { createObject, deleteObject, type Actor } from '../annotations/objects';
import { reviewObjects } from '../annotations/review';
import { recordAudit } from '../audit';
import { emitLabelIssue } from '../events/labels';
import type { Db } from '../db';
import { findErrorRun } from './runs';

/**
 * Error candidates and their verdicts (docs/quality-errordetect.md). A candidate is `open` until a
 * reviewer confirms it (optionally applying its proposed fix through the annotation store's own
 * functions) or dismisses it; a decided candidate stays decided.
 */

export const CANDIDATE_STATES = ['open', 'confirmed', 'dismissed'] as const;
export type CandidateState = (typeof CANDIDATE_STATES)[number];
export const VERDICTS = ['confirm', 'dismiss'] as const;
export type Verdict = (typeof VERDICTS)[number];
/** Most candidates one bulk verdict names (as BulkReviewIn's object_ids). */
export const BULK_MAX_CANDIDATES = 1000;

export const candidateOut = (c: ErrorCandidate) => ({
  id: c.id,
  error_run_id: c.errorRunId,
  kind: c.kind,
  frame_id: c.frameId,
  object_ids: c.objectIds,
  prediction_id: c.predictionId,
  score: c.score,
  proposed: c.proposed,
  evidence: c.evidence,
  state: c.state,
  reviewer: c.reviewer,
  reviewer_id: c.reviewerId,
  note: c.note,
  applied: c.applied,
  verdict_at: c.verdictAt?.toISOString() ?? null,
  created_at: c.createdAt.toISOString(),
});

export interface CandidateQuery {
  error_run_id?: string | undefined;
  kind?: ErrorKind | undefined;
  state?: CandidateState | undefined;
  frame_id?: string | undefined;
  min_score?: number | undefined;
  limit: number;
  cursor?: string | undefined;
}

/** Candidates by score, highest first (ties by id), paged by the last id of the previous page. */
export async function listCandidates(db: Db, query: CandidateQuery) {
  if (query.error_run_id) await findErrorRun(db, query.error_run_id);
  if (
    query.cursor &&
    !(await db.errorCandidate.findUnique({ where: { id: query.cursor }, select: { id: true } }))
  )
    throw new InputError('the cursor names no candidate', [
      { field: 'query.cursor', message: 'not a next_cursor of this list' },
    ]);
  const where: Prisma.ErrorCandidateWhereInput = {
    ...(query.error_run_id ? { errorRunId: query.error_run_id } : {}),
    ...(query.kind ? { kind: query.kind } : {}),
    ...(query.state ? { state: query.state } : {}),
    ...(query.frame_id ? { frameId: query.frame_id } : {}),
    ...(query.min_score !== undefined ? { score: { gte: query.min_score } } : {}),
  };
  const rows = await db.errorCandidate.findMany({
    where,
    orderBy: [{ score: 'desc' }, { id: 'asc' }],
    ...idCursorArgs(query),
  });
  const { page, next_cursor } = idPage(rows, query.limit);
  return { items: page.map(candidateOut), next_cursor };
}

export interface VerdictInput {
  candidateId: string;
  verdict: Verdict;
  /** Confirm only: apply the proposed fix. */
  applyProposed: boolean;
  /** The reviewer name the candidate and the review records carry. */
  reviewer: string;
  /** The user credited with the verdict; null credits the caller. */
  userId: string | null;
  note: string | null;
}

type Proposed =
  | { action: 'relabel'; class_id: number }
  | { action: 'move'; bbox: number[] }
  | { action: 'delete'; object_id: string }
  | { action: 'create'; class_id: number; bbox: number[] };

/** What applying a fix changed, as stored in the candidate's `applied`. */
export type Applied = Record<string, unknown> & { action: Proposed['action'] };

const objectVersions = (c: ErrorCandidate): Record<string, number> =>
  ((c.evidence as { object_versions?: Record<string, number> }).object_versions ?? {}) as Record<
    string,
    number
  >;

/**
 * The candidate's objects as the detection saw them: any that moved to another version or is gone
 * refuses the fix (409 naming each), since the proposal judged content that is no longer there.
 */
async function checkUnchanged(db: Db, c: ErrorCandidate) {
  const seen = objectVersions(c);
  const current = await db.annoObject.findMany({
    where: { id: { in: c.objectIds } },
    select: { id: true, version: true, classId: true, bbox: true, frameId: true },
  });
  const byId = new Map(current.map((o) => [o.id, o]));
  const conflicts = c.objectIds.flatMap((id) => {
    const now = byId.get(id);
    if (now && now.version === seen[id]) return [];
    return [{ object_id: id, expected: seen[id] ?? null, actual: now?.version ?? null, gone: !now }];
  });
  if (conflicts.length) {
    const what = conflicts
      .map((k) =>
        k.gone
          ? `object ${k.object_id} is gone`
          : `object ${k.object_id} changed since detection (version ${k.expected} → ${k.actual})`,
      )
      .join('; ');
    throw new ConflictError(`${what}; nothing was applied`, { conflicts });
  }
  return byId;
}

/** A store function's "it is not there" means the candidate is stale: a conflict, not a missing candidate. */
async function staleIfMissing<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (err instanceof NotFoundError) throw new ConflictError(`${what} is gone; nothing was applied`);
    throw err;
  }
}

/**
 * Applies a candidate's proposed fix through the annotation store's own functions, so review
 * records, versions and audit entries are written exactly as the review and object routes write
 * them: relabel → a review `edit` with the new class; move → a review `edit` of the box
 * (axis-aligned, as the detector drew it); delete → the object delete; create → a human,
 * accepted object whose idem_key is the candidate's, so a repeated confirm cannot make two.
 */
async function applyFix(
  db: Db,
  masks: MaskStore,
  c: ErrorCandidate,
  reviewer: string,
  actor: Actor,
): Promise<Applied> {
  const proposed = c.proposed as Proposed;
  const before = await checkUnchanged(db, c);
  const versions = objectVersions(c);
  const edit = async (objectId: string, effect: Parameters<typeof reviewEffect>[0]) =>
    staleIfMissing(`object ${objectId}`, () =>
      reviewObjects(
        db,
        masks,
        {
          objectIds: [objectId],
          action: 'edit',
          effect: reviewEffect(effect),
          expectedVersions: { [objectId]: versions[objectId]! },
          reviewer,
          timeSpentMs: 0,
          bulk: false,
        },
        actor,
      ),
    );
  switch (proposed.action) {
    case 'relabel': {
      const objectId = c.objectIds[0]!;
      const cls = await db.ontologyClass.findUnique({ where: { id: proposed.class_id } });
      if (!cls) throw new RefusedError(`class ${proposed.class_id} no longer exists`);
      const done = await edit(objectId, {
        action: 'edit',
        state: null,
        className: cls.name,
        attrs: null,
        shape: null,
      });
      const o = done.objects[0]!;
      return {
        action: 'relabel',
        object_id: objectId,
        from_class_id: before.get(objectId)!.classId,
        to_class_id: o.class_id,
        class_name: cls.name,
        version: o.version,
      };
    }
    case 'move': {
      const objectId = c.objectIds[0]!;
      const done = await edit(objectId, {
        action: 'edit',
        state: null,
        className: null,
        attrs: null,
        shape: { bbox: proposed.bbox, rot_deg: 0 },
      });
      const after = await db.annoObject.findUniqueOrThrow({
        where: { id: objectId },
        select: { bbox: true },
      });
      return {
        action: 'move',
        object_id: objectId,
        bbox_before: before.get(objectId)!.bbox,
        bbox_after: after.bbox,
        version: done.objects[0]!.version,
      };
    }
    case 'delete': {
      const o = before.get(proposed.object_id)!;
      await staleIfMissing(`object ${proposed.object_id}`, () =>
        deleteObject(db, masks, proposed.object_id, actor),
      );
      return { action: 'delete', object_id: proposed.object_id, class_id: o.classId, bbox: o.bbox };
    }
    case 'create': {
      const cls = await db.ontologyClass.findUnique({ where: { id: proposed.class_id } });
      if (!cls) throw new RefusedError(`class ${proposed.class_id} no longer exists`);
      const created = await staleIfMissing(`frame ${c.frameId}`, () =>
        createObject(
          db,
          masks,
          c.frameId,
          {
            class_name: cls.name,
            bbox: proposed.bbox,
            rot_deg: 0,
            attrs: {},
            cuboid_3d: null,
            keypoints: null,
            mask_polygons: null,
            polyline: null,
            idem_key: `errordetect-${c.id}`,
            job_id: null,
            state: 'accepted',
          },
          actor,
        ),
      );
      return {
        action: 'create',
        object_id: created.object.id,
        class_id: created.object.classId,
        bbox: created.object.bbox,
        state: created.object.state,
        replayed: created.replayed,
      };
    }
  }
}

async function checkCreditedUser(db: Db, userId: string | null, actor: Actor): Promise<string> {
  if (userId === null || userId === actor.userId) return actor.userId;
  if (!(await db.user.findUnique({ where: { id: userId }, select: { id: true } })))
    throw new NotFoundError(`no user ${userId}`);
  return userId;
}

/**
 * One verdict. The candidate's row is locked for the whole verdict, so a second verdict on it
 * waits and then finds it decided (409). The fix, when applied, commits in the store's own
 * transaction (the store's functions open theirs) while that lock is held; the candidate's new
 * state, `applied` and the audit entry commit right after in the candidate's transaction. A fix
 * that fails leaves the candidate open and nothing changed.
 */
export async function decideCandidate(
  db: Db,
  masks: MaskStore,
  input: VerdictInput,
  actor: Actor,
): Promise<ReturnType<typeof candidateOut>> {
  const credited = await checkCreditedUser(db, input.userId, actor);
  const decided = await db.$transaction(
    async (tx) => {
      const locked = await tx.$queryRaw<Array<{ id: string }>>`
        SELECT id::text FROM error_candidates WHERE id = ${input.candidateId}::uuid FOR UPDATE`;
      if (!locked.length) throw new NotFoundError(`no error candidate ${input.candidateId}`);
      const c = await tx.errorCandidate.findUniqueOrThrow({ where: { id: input.candidateId } });
      if (c.state !== 'open')
        throw new ConflictError(
          `candidate ${c.id} is already ${c.state}${c.verdictAt ? ` (${c.verdictAt.toISOString()})` : ''}`,
          { state: c.state },
        );
      const state: CandidateState = input.verdict === 'confirm' ? 'confirmed' : 'dismissed';
      const applied =
        input.verdict === 'confirm' && input.applyProposed
          ? await applyFix(db, masks, c, input.reviewer, actor)
          : null;
      const updated = await tx.errorCandidate.update({
        where: { id: c.id },
        data: {
          state,
          reviewer: input.reviewer,
          reviewerId: credited,
          note: input.note,
          applied: applied === null ? Prisma.DbNull : (applied as Prisma.InputJsonValue),
          verdictAt: new Date(),
        },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: `errordetect.candidate.${state}`,
        subjectType: 'error_candidate',
        subjectId: c.id,
        detail: {
          kind: c.kind,
          error_run_id: c.errorRunId,
          reviewer: input.reviewer,
          credited_user_id: credited,
          note: input.note,
          applied,
        } as Prisma.InputJsonValue,
        requestId: actor.requestId,
      });
      if (state === 'confirmed')
        await emitLabelIssue(tx, c, applied as Prisma.InputJsonValue | null, actor.userId);
      return updated;
    },
    { timeout: 60_000 },
  );
  return candidateOut(decided);
}

export type BulkOutcome =
  | { candidate_id: string; status: 200; outcome: CandidateState; applied: unknown }
  | {
      candidate_id: string;
      status: 404 | 409 | 422;
      outcome: 'not_found' | 'conflict' | 'refused';
      detail: string;
      conflicts?: unknown;
    };

const outcomeOf = (id: string, err: DomainError): BulkOutcome | null => {
  const conflicts = (err.details as { conflicts?: unknown } | undefined)?.conflicts;
  if (err instanceof NotFoundError)
    return { candidate_id: id, status: 404, outcome: 'not_found', detail: err.message };
  if (err instanceof ConflictError)
    return {
      candidate_id: id,
      status: 409,
      outcome: 'conflict',
      detail: err.message,
      ...(conflicts ? { conflicts } : {}),
    };
  if (err instanceof InputError || err instanceof RefusedError)
    return { candidate_id: id, status: 422, outcome: 'refused', detail: err.message };
  return null;
};

/**
 * A verdict on many candidates, each in its own transaction: one that cannot be decided (gone,
 * already decided, its object changed) is reported and the rest go on. Not all-or-nothing, because
 * each candidate's fix touches different objects and a stale one should not hold back the others.
 * A failure that is not the candidate's own (the database going away) stops the batch with 5xx;
 * the candidates decided before it stay decided and a repeat reports them as conflicts.
 */
export async function bulkDecide(
  db: Db,
  masks: MaskStore,
  input: {
    candidate_ids: string[];
    verdict: Verdict;
    apply_proposed: boolean;
    note: string | null;
    reviewer: string;
  },
  actor: Actor,
) {
  const ids = [...new Set(input.candidate_ids)];
  const results: BulkOutcome[] = [];
  for (const id of ids) {
    try {
      const c = await decideCandidate(
        db,
        masks,
        {
          candidateId: id,
          verdict: input.verdict,
          applyProposed: input.apply_proposed,
          reviewer: input.reviewer,
          userId: null,
          note: input.note,
        },
        actor,
      );
      results.push({ candidate_id: id, status: 200, outcome: c.state as CandidateState, applied: c.applied });
    } catch (err) {
      const outcome = err instanceof DomainError ? outcomeOf(id, err) : null;
      if (!outcome) throw err;
      results.push(outcome);
    }
  }
  const counts = { decided: 0, not_found: 0, conflict: 0, refused: 0 };
  for (const r of results) counts[r.status === 200 ? 'decided' : r.outcome]++;
  return { verdict: input.verdict, count: ids.length, ...counts, results };
}

import { ConflictError } from '../../core/errors';
import { Prisma, type ErrorCandidate } from '../../generated/prisma/client';
import type { Db } from '../db';
import { emitEvent } from './emit';

/**
 * Events about labels (docs/events.md): a review refused as stale (`review.conflict`) and an issue
 * confirmed on a label (`label.issue`).
 */

type Tx = Db | Prisma.TransactionClient;

/**
 * The people who wrote the labels as they were at `at`: for each object, the last human who
 * reviewed or edited it then, or who created it when no one had touched it since.
 */
async function labelAuthors(tx: Tx, objectIds: readonly string[], at: Date): Promise<string[]> {
  if (!objectIds.length) return [];
  const rows = await tx.$queryRaw<Array<{ user_id: string }>>`
    SELECT DISTINCT ON (object_id) user_id::text FROM (
      SELECT object_id, reviewer_id AS user_id, created_at FROM reviews
       WHERE object_id = ANY(${objectIds}::uuid[]) AND reviewer_id IS NOT NULL AND created_at <= ${at}
      UNION ALL
      SELECT subject_id::uuid, actor_id, created_at FROM audit_log
       WHERE subject_type = 'object' AND action = 'object.created' AND actor_id IS NOT NULL
         AND subject_id = ANY(${objectIds}::text[]) AND created_at <= ${at}
    ) w ORDER BY object_id, created_at DESC`;
  return [...new Set(rows.map((r) => r.user_id))];
}

/**
 * A confirmed error candidate is an issue on the labels it names (spec Events 2): the reviewer
 * group and the annotators of those labels, as detection saw them, are notified.
 */
export async function emitLabelIssue(
  tx: Tx,
  c: ErrorCandidate,
  applied: Prisma.InputJsonValue | null,
  actorId: string,
) {
  return emitEvent(tx, {
    kind: 'label.issue',
    subjectType: 'error_candidate',
    subjectId: c.id,
    actorId,
    payload: {
      issue_kind: c.kind,
      candidate_id: c.id,
      frame_id: c.frameId,
      object_ids: c.objectIds,
      annotators: await labelAuthors(tx, c.objectIds, c.createdAt),
      proposed: c.proposed as Prisma.InputJsonValue,
      applied,
    },
  });
}

interface VersionConflict {
  object_id: string;
  expected: number;
}

const versionConflicts = (err: unknown): VersionConflict[] => {
  if (!(err instanceof ConflictError)) return [];
  const listed = (err.details as { conflicts?: unknown } | undefined)?.conflicts;
  return Array.isArray(listed)
    ? listed.filter(
        (c): c is VersionConflict =>
          typeof (c as VersionConflict).object_id === 'string' &&
          typeof (c as VersionConflict).expected === 'number',
      )
    : [];
};

async function emitReviewConflict(db: Db, conflicts: VersionConflict[], actorId: string) {
  const objectIds = conflicts.map((c) => c.object_id);
  const editors = await db.$queryRaw<Array<{ user_id: string }>>`
    SELECT DISTINCT r.reviewer_id::text AS user_id FROM reviews r
      JOIN unnest(${objectIds}::uuid[], ${conflicts.map((c) => c.expected)}::int[]) AS c(object_id, expected)
        ON c.object_id = r.object_id
     WHERE r.reviewer_id IS NOT NULL AND (r.after->>'version')::int > c.expected`;
  return emitEvent(db, {
    kind: 'review.conflict',
    subjectType: 'object',
    subjectId: objectIds[0]!,
    actorId,
    payload: {
      object_ids: objectIds,
      conflicts: conflicts as unknown as Prisma.InputJsonArray,
      refused_by: actorId,
      edited_by: editors.map((e) => e.user_id),
    },
  });
}

/**
 * For a review's `.catch`: a review refused because its labels changed since they were read
 * becomes a `review.conflict` event notifying those who changed them (the versions after the one
 * the reviewer read); the error goes on to the caller (409) either way.
 */
export async function reportReviewConflict(db: Db, err: unknown, actorId: string): Promise<never> {
  const conflicts = versionConflicts(err);
  // The 409 is the answer that matters: an event that cannot be recorded must not turn it into a 500.
  if (conflicts.length) await emitReviewConflict(db, conflicts, actorId).catch(() => undefined);
  throw err;
}

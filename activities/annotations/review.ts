import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import { clampStateForRole } from '../../core/objects/states';
import type { ReviewAction, ReviewEffect } from '../../core/review/actions';
import { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { resolveClass } from './classes';
import type { Actor } from './objects';

export interface ReviewInput {
  objectIds: readonly string[];
  action: ReviewAction;
  effect: ReviewEffect;
  /** object id → version the caller saw; null skips the check. */
  expectedVersions: Readonly<Record<string, number>> | null;
  reviewer: string;
  timeSpentMs: number;
  /** A bulk review gets a batch stamp; a single review does not. */
  bulk: boolean;
}

export interface ReviewResult {
  batchId: string | null;
  objects: Array<{ id: string; version: number; state: string; class_id: number; source: string }>;
}

interface LockedRow {
  id: string;
  version: number;
}

/**
 * Applies one review action to one or many objects in ONE transaction: rows are locked in id
 * order (so overlapping batches queue instead of deadlocking), every expected version is compared
 * with the locked row, and only when all match are the objects updated (`source` → human,
 * `version` + 1), one Review per object appended with the prior source, conf and provenance in
 * `before`, and the batch stamped. Any mismatch → 409 and nothing is written.
 */
export async function reviewObjects(db: Db, input: ReviewInput, actor: Actor): Promise<ReviewResult> {
  const ids = [...new Set(input.objectIds)].sort();
  if (input.expectedVersions) {
    const missing = ids.filter((id) => input.expectedVersions![id] === undefined);
    const extra = Object.keys(input.expectedVersions).filter((id) => !ids.includes(id));
    if (missing.length || extra.length) {
      throw new InputError('expected_versions must name exactly the reviewed objects', [
        ...missing.map((id) => ({ field: `body.expected_versions.${id}`, message: 'missing' })),
        ...extra.map((id) => ({ field: `body.expected_versions.${id}`, message: 'not among object_ids' })),
      ]);
    }
  }
  const cls = input.effect.className ? await resolveClass(db, input.effect.className) : null;
  const state = input.effect.state ? clampStateForRole(input.effect.state, actor.role).state : null;
  const attrs = input.effect.attrs ? JSON.stringify(input.effect.attrs) : null;

  return db.$transaction(
    async (tx) => {
      const rows = await tx.$queryRaw<LockedRow[]>`
        SELECT id::text, version FROM objects
        WHERE id = ANY(${ids}::uuid[]) ORDER BY id FOR UPDATE`;
      if (rows.length !== ids.length) {
        const found = new Set(rows.map((r) => r.id));
        const missing = ids.filter((id) => !found.has(id));
        throw new NotFoundError(`${missing.length} object(s) do not exist`, { missing });
      }
      if (input.expectedVersions) {
        const conflicts = rows
          .filter((r) => r.version !== input.expectedVersions![r.id])
          .map((r) => ({ object_id: r.id, expected: input.expectedVersions![r.id], actual: r.version }));
        if (conflicts.length)
          throw new ConflictError(
            `${conflicts.length} object(s) changed since they were read; nothing was applied`,
            { conflicts },
          );
      }
      const batch = input.bulk
        ? await tx.reviewBatch.create({
            data: {
              reviewerId: actor.userId,
              reviewer: input.reviewer,
              action: input.action,
              objectCount: ids.length,
            },
          })
        : null;
      // One statement updates the rows and appends their reviews: its CTEs all read the snapshot
      // taken before the UPDATE, so `prev` holds each object's prior state for `before`.
      const updated = await tx.$queryRaw<ReviewResult['objects']>`
        WITH prev AS (
          SELECT id, class_id, conf, source, state, version, attrs FROM objects WHERE id = ANY(${ids}::uuid[])
        ), prov AS (
          SELECT DISTINCT ON (object_id) object_id, to_jsonb(p) - 'object_id' AS p FROM provenance p
          WHERE object_id = ANY(${ids}::uuid[]) ORDER BY object_id, created_at DESC
        ), upd AS (
          UPDATE objects SET
            state = COALESCE(${state}::text, state),
            class_id = COALESCE(${cls?.id ?? null}::int, class_id),
            attrs = CASE WHEN ${attrs}::jsonb IS NULL THEN attrs ELSE attrs || ${attrs}::jsonb END,
            source = 'human', version = version + 1, updated_at = now()
          WHERE id = ANY(${ids}::uuid[])
          RETURNING id, version, state, class_id, source
        ), ins AS (
          INSERT INTO reviews (id, object_id, reviewer_id, reviewer, action, before, after, batch_id, time_spent_ms)
          SELECT gen_random_uuid(), p.id, ${actor.userId}::uuid, ${input.reviewer}, ${input.action},
                 jsonb_build_object('source', p.source, 'conf', p.conf, 'provenance', pr.p, 'state', p.state, 'class_id', p.class_id, 'version', p.version, 'attrs', p.attrs),
                 jsonb_build_object('source', u.source, 'state', u.state, 'class_id', u.class_id, 'version', u.version, 'attrs_patch', ${attrs}::jsonb),
                 ${batch?.id ?? null}::uuid, ${input.timeSpentMs}
          FROM prev p JOIN upd u ON u.id = p.id LEFT JOIN prov pr ON pr.object_id = p.id
        )
        SELECT id::text, version, state, class_id, source FROM upd ORDER BY id`;
      await recordAudit(tx, {
        actorId: actor.userId,
        action: input.bulk ? 'objects.bulk_reviewed' : 'object.reviewed',
        subjectType: input.bulk ? 'review_batch' : 'object',
        subjectId: batch?.id ?? ids[0]!,
        detail: {
          action: input.action,
          state,
          class: cls?.name ?? null,
          attrs: input.effect.attrs,
          count: ids.length,
          ...(input.bulk ? { object_ids: ids } : {}),
        } as Prisma.InputJsonValue,
        requestId: actor.requestId,
      });
      return { batchId: batch?.id ?? null, objects: updated };
    },
    { timeout: 30_000 },
  );
}

import { ConflictError, InputError, NotFoundError } from '../../core/errors';
import type { Box } from '../../core/geometry';
import { applyShapeEdit, type EditedShape, type ShapeEdit } from '../../core/objects/shape-edit';
import { clampStateForRole, stateAfterEdit } from '../../core/objects/states';
import { changesContent, type ReviewAction, type ReviewEffect } from '../../core/review/actions';
import { Prisma } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import { reportReviewConflict } from '../events/labels';
import type { Db } from '../db';
import { resolveClass } from './classes';
import type { MaskStore } from './masks';
import type { Actor, Tx } from './objects';

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
  /**
   * More writes that must commit with the review or not at all (a track relabel's undo record),
   * run last inside its transaction with what it wrote.
   */
  alsoWrite?: (tx: Prisma.TransactionClient, written: ReviewResult) => Promise<void>;
}

export interface ReviewResult {
  batchId: string | null;
  objects: Array<{ id: string; version: number; state: string; class_id: number; source: string }>;
}

interface LockedRow {
  id: string;
  version: number;
  state: string;
}

/**
 * The object's geometry after the edit, normalised against its frame. Read under the row lock, so
 * the mask it encloses is the one the object has when the edit is written.
 */
async function editShape(
  tx: Tx,
  masks: Pick<MaskStore, 'read'>,
  id: string,
  edit: ShapeEdit,
): Promise<EditedShape> {
  const o = await tx.annoObject.findUniqueOrThrow({
    where: { id },
    include: { frame: { select: { width: true, height: true } } },
  });
  const mask = o.maskUri ? (await masks.read(o.maskUri)).polygons : null;
  const current = {
    bbox: o.bbox as Box,
    rbox: o.rbox.length === 4 ? (o.rbox as Box) : null,
    rot_deg: o.rotDeg,
    polyline: o.polyline as number[][] | null,
    keypoints: o.keypoints as Record<string, number[]> | null,
  };
  return applyShapeEdit(current, edit, mask, o.frame);
}

/** An object's geometry columns as a review snapshot holds them (`alias`: a CTE of this module). */
function shapeJson(alias: 'p' | 'u'): Prisma.Sql {
  const a = Prisma.raw(alias);
  return Prisma.sql`jsonb_build_object('bbox', ${a}.bbox, 'rbox', ${a}.rbox, 'rot_deg', ${a}.rot_deg,
    'polyline', ${a}.polyline, 'keypoints', ${a}.keypoints)`;
}

const jsonParam = (v: unknown) => (v === null ? null : JSON.stringify(v));

/**
 * Applies one review action to one or many objects in ONE transaction: rows are locked in id
 * order (so overlapping batches queue instead of deadlocking), every expected version is compared
 * with the locked row, and only when all match are the objects updated (`source` → human,
 * `version` + 1), one Review per object appended with the prior source, conf and provenance in
 * `before`, and the batch stamped. Any mismatch → 409 and nothing is written. A geometry edit
 * (one object only) is normalised under the lock and written by the same statement; its review
 * carries the geometry before and after. A content change without a state goes through
 * stateAfterEdit, so an annotator's edit of a judged object hands it back for review.
 */
export async function reviewObjects(
  db: Db,
  masks: Pick<MaskStore, 'read'>,
  input: ReviewInput,
  actor: Actor,
): Promise<ReviewResult> {
  const ids = [...new Set(input.objectIds)].sort();
  if (input.effect.shape && ids.length !== 1) throw new Error('a geometry edit names exactly one object');
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

  const reviewed = db.$transaction(
    async (tx) => {
      const rows = await tx.$queryRaw<LockedRow[]>`
        SELECT id::text, version, state FROM objects
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
      const edit = input.effect.shape ? await editShape(tx, masks, ids[0]!, input.effect.shape) : null;
      const shape = edit?.shape ?? null;
      const content = changesContent(input.effect);
      const next = rows.map((r) =>
        state === null && content
          ? stateAfterEdit(r.state, actor.role)
          : { state: state ?? r.state, reopened: false },
      );
      const states = next.map((n) => n.state);
      const reopened = next.filter((n) => n.reopened).length;
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
      // taken before the UPDATE, so `prev` holds each object's prior state for `before`. Each
      // row's next state comes in beside its id (stateAfterEdit depends on the row's own state).
      const hasShape = shape !== null;
      const updated = await tx.$queryRaw<ReviewResult['objects']>`
        WITH nxt AS (
          SELECT * FROM unnest(${rows.map((r) => r.id)}::uuid[], ${states}::text[]) AS n(id, state)
        ), prev AS (
          SELECT id, class_id, conf, source, state, version, attrs, bbox, rbox, rot_deg, polyline, keypoints
          FROM objects WHERE id = ANY(${ids}::uuid[])
        ), prov AS (
          SELECT DISTINCT ON (object_id) object_id, to_jsonb(p) - 'object_id' AS p FROM provenance p
          WHERE object_id = ANY(${ids}::uuid[]) ORDER BY object_id, created_at DESC
        ), upd AS (
          UPDATE objects o SET
            state = n.state,
            class_id = COALESCE(${cls?.id ?? null}::int, o.class_id),
            attrs = CASE WHEN ${attrs}::jsonb IS NULL THEN o.attrs ELSE o.attrs || ${attrs}::jsonb END,
            bbox = CASE WHEN ${hasShape} THEN ${shape?.bbox ?? null}::float8[] ELSE o.bbox END,
            rbox = CASE WHEN ${hasShape} THEN COALESCE(${shape?.rbox ?? null}::float8[], ARRAY[]::float8[]) ELSE o.rbox END,
            rot_deg = CASE WHEN ${hasShape} THEN ${shape?.rot_deg ?? null}::float8 ELSE o.rot_deg END,
            polyline = CASE WHEN ${hasShape} THEN ${jsonParam(shape?.polyline ?? null)}::jsonb ELSE o.polyline END,
            keypoints = CASE WHEN ${hasShape} THEN ${jsonParam(shape?.keypoints ?? null)}::jsonb ELSE o.keypoints END,
            source = 'human', version = o.version + 1, updated_at = now()
          FROM nxt n WHERE o.id = n.id
          RETURNING o.id, o.version, o.state, o.class_id, o.source, o.bbox, o.rbox, o.rot_deg, o.polyline, o.keypoints
        ), ins AS (
          INSERT INTO reviews (id, object_id, reviewer_id, reviewer, action, before, after, batch_id, time_spent_ms)
          SELECT gen_random_uuid(), p.id, ${actor.userId}::uuid, ${input.reviewer}, ${input.action},
                 jsonb_build_object('source', p.source, 'conf', p.conf, 'provenance', pr.p, 'state', p.state, 'class_id', p.class_id, 'version', p.version, 'attrs', p.attrs)
                   || CASE WHEN ${hasShape} THEN ${shapeJson('p')} ELSE '{}'::jsonb END,
                 jsonb_build_object('source', u.source, 'state', u.state, 'class_id', u.class_id, 'version', u.version, 'attrs_patch', ${attrs}::jsonb)
                   || CASE WHEN ${hasShape} THEN ${shapeJson('u')} ELSE '{}'::jsonb END,
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
          ...(edit ? { shapes_changed: edit.changed, clipped: edit.clipped } : {}),
          reopened,
          count: ids.length,
          ...(input.bulk ? { object_ids: ids } : {}),
        } as Prisma.InputJsonValue,
        requestId: actor.requestId,
      });
      const written = { batchId: batch?.id ?? null, objects: updated };
      await input.alsoWrite?.(tx, written);
      return written;
    },
    { timeout: 30_000 },
  );
  return reviewed.catch((err: unknown) => reportReviewConflict(db, err, actor.userId));
}

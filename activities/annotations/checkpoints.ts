import { ConflictError, NotFoundError } from '../../core/errors';
import { Prisma, type AnnoObject } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { withNewMasks, type MaskStore } from './masks';
import { getFrame, objectSnapshot, type Actor } from './objects';

/** A checkpoint's snapshot: each object's fields with its mask polygons inline (blobs change). */
type SavedObject = ReturnType<typeof objectSnapshot> & { mask_polygons: number[][] | null };
interface Snapshot {
  objects: SavedObject[];
}

export const checkpointOut = (c: {
  id: string;
  frameId: string;
  name: string;
  note: string | null;
  createdBy: string | null;
  createdAt: Date;
  snapshot: unknown;
}) => ({
  id: c.id,
  frame_id: c.frameId,
  name: c.name,
  note: c.note,
  object_count: (c.snapshot as Snapshot).objects.length,
  created_by: c.createdBy,
  created_at: c.createdAt.toISOString(),
});

async function snapshotFrame(
  tx: Db | Prisma.TransactionClient,
  masks: MaskStore,
  frameId: string,
): Promise<Snapshot> {
  const objects = await tx.annoObject.findMany({
    where: { frameId },
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
  });
  return {
    objects: await Promise.all(
      objects.map(async (o) => ({
        ...objectSnapshot(o),
        mask_polygons: o.maskUri ? (await masks.read(o.maskUri)).polygons : null,
      })),
    ),
  };
}

export async function saveCheckpoint(
  db: Db,
  masks: MaskStore,
  frameId: string,
  name: string,
  note: string | null,
  actor: Actor,
) {
  await getFrame(db, frameId);
  const snapshot = await snapshotFrame(db, masks, frameId);
  return db.$transaction(async (tx) => {
    const c = await tx.checkpoint.create({
      data: {
        frameId,
        name,
        note,
        snapshot: snapshot as unknown as Prisma.InputJsonValue,
        createdBy: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'checkpoint.saved',
      subjectType: 'checkpoint',
      subjectId: c.id,
      detail: { frame_id: frameId, name, objects: snapshot.objects.length },
      requestId: actor.requestId,
    });
    return c;
  });
}

export async function getCheckpoint(db: Db, id: string) {
  const c = await db.checkpoint.findUnique({ where: { id } });
  if (!c) throw new NotFoundError(`no checkpoint ${id}`);
  return c;
}

export async function deleteCheckpoint(db: Db, id: string, actor: Actor): Promise<void> {
  await db.$transaction(async (tx) => {
    const c = await tx.checkpoint.findUnique({ where: { id } });
    if (!c) throw new NotFoundError(`no checkpoint ${id}`);
    await tx.checkpoint.delete({ where: { id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'checkpoint.deleted',
      subjectType: 'checkpoint',
      subjectId: id,
      detail: { frame_id: c.frameId, name: c.name },
      requestId: actor.requestId,
    });
  });
}

const json = (v: unknown) => (v === null || v === undefined ? Prisma.DbNull : (v as Prisma.InputJsonValue));

/**
 * Restores a frame to a checkpoint in ONE transaction. The current state is first saved as an
 * automatic checkpoint (so a restore can itself be undone). Objects in both states are rewritten
 * in place (provenance kept), objects added since are deleted, objects deleted since come back
 * under their old ids. Every touched object's version moves past both its current and its saved
 * version, so an editor holding an old version gets a 409. Masks are written as new blobs first;
 * the replaced blobs are removed after the commit.
 */
export async function restoreCheckpoint(db: Db, masks: MaskStore, id: string, actor: Actor) {
  const cp = await getCheckpoint(db, id);
  const saved = (cp.snapshot as unknown as Snapshot).objects;
  const before = await snapshotFrame(db, masks, cp.frameId);
  const currentVersions = new Map(before.objects.map((o) => [o.id, o.version]));
  // An object deleted since the save comes back past the last version it had before deletion.
  const gone = saved.map((o) => o.id).filter((oid) => !currentVersions.has(oid));
  const lastSeen = await db.$queryRaw<Array<{ id: string; version: number }>>`
    SELECT subject_id AS id, max(coalesce((detail->'before'->>'version')::int, (detail->>'version')::int)) AS version
    FROM audit_log WHERE subject_type = 'object' AND action = 'object.deleted' AND subject_id = ANY(${gone}::text[])
    GROUP BY subject_id`;
  for (const r of lastSeen) if (r.version !== null) currentVersions.set(r.id, r.version);
  const nextVersion = (o: SavedObject) => Math.max(o.version, currentVersions.get(o.id) ?? 0) + 1;
  const docs = saved
    .filter((o) => o.mask_polygons)
    .map((o) => ({ object_id: o.id, version: nextVersion(o), polygons: o.mask_polygons! }));
  let replaced: AnnoObject[] = [];
  const result = await withNewMasks(masks, docs, (uris) =>
    db.$transaction(
      async (tx) => {
        const current = await tx.$queryRaw<
          Array<{ id: string; version: number }>
        >`SELECT id::text, version FROM objects WHERE frame_id = ${cp.frameId}::uuid ORDER BY id FOR UPDATE`;
        if (
          current.length !== before.objects.length ||
          current.some((c) => currentVersions.get(c.id) !== c.version)
        ) {
          throw new ConflictError(`frame ${cp.frameId} changed while restoring; nothing was restored, retry`);
        }
        replaced = await tx.annoObject.findMany({ where: { frameId: cp.frameId } });
        const auto = await tx.checkpoint.create({
          data: {
            frameId: cp.frameId,
            name: `before restore of ${cp.name}`,
            note: `automatic, restore of checkpoint ${cp.id}`,
            snapshot: before as unknown as Prisma.InputJsonValue,
            createdBy: actor.userId,
          },
        });
        const keep = new Set(saved.map((o) => o.id));
        const live = new Set(current.map((c) => c.id));
        const removed = current.map((c) => c.id).filter((cid) => !keep.has(cid));
        await tx.annoObject.deleteMany({ where: { id: { in: removed } } });
        const tracks = new Set(
          (
            await tx.track.findMany({
              where: { id: { in: saved.flatMap((o) => (o.track_id ? [o.track_id] : [])) } },
              select: { id: true },
            })
          ).map((t) => t.id),
        );
        for (const o of saved) {
          const data = {
            bbox: o.bbox,
            rotDeg: o.rot_deg,
            rbox: o.rbox,
            classId: o.class_id,
            conf: o.conf,
            attrs: o.attrs as Prisma.InputJsonValue,
            maskUri: uris.get(o.id) ?? null,
            polyline: json(o.polyline),
            cuboid3d: json(o.cuboid_3d),
            keypoints: json(o.keypoints),
            source: o.source,
            state: o.state,
            version: nextVersion(o),
            trackId: o.track_id && tracks.has(o.track_id) ? o.track_id : null,
            jobId: o.job_id,
          };
          if (live.has(o.id)) await tx.annoObject.update({ where: { id: o.id }, data });
          else await tx.annoObject.create({ data: { id: o.id, frameId: cp.frameId, ...data } });
        }
        await recordAudit(tx, {
          actorId: actor.userId,
          action: 'checkpoint.restored',
          subjectType: 'checkpoint',
          subjectId: cp.id,
          detail: {
            frame_id: cp.frameId,
            restored: saved.length,
            deleted: removed,
            undo_checkpoint_id: auto.id,
          },
          requestId: actor.requestId,
        });
        await tx.auditLog.createMany({
          data: [
            ...saved.map((o) => ({
              actorId: actor.userId,
              action: 'object.restored',
              subjectType: 'object',
              subjectId: o.id,
              detail: { checkpoint_id: cp.id, version: nextVersion(o) },
              requestId: actor.requestId,
            })),
            ...removed.map((rid) => ({
              actorId: actor.userId,
              action: 'object.deleted',
              subjectType: 'object',
              subjectId: rid,
              detail: { checkpoint_id: cp.id, reason: 'restore', version: currentVersions.get(rid)! },
              requestId: actor.requestId,
            })),
          ],
        });
        return {
          checkpoint_id: cp.id,
          frame_id: cp.frameId,
          restored: saved.length,
          deleted: removed.length,
          undo_checkpoint_id: auto.id,
        };
      },
      { timeout: 60_000 },
    ),
  );
  await masks.remove(replaced.map((o) => o.maskUri));
  return result;
}

/** Every recorded change of an object, oldest first: its reviews and its audit entries. */
export async function objectHistory(db: Db, objectId: string) {
  const [object, reviews, audits] = await Promise.all([
    db.annoObject.findUnique({ where: { id: objectId }, select: { version: true } }),
    db.review.findMany({ where: { objectId }, orderBy: { createdAt: 'asc' } }),
    db.auditLog.findMany({ where: { subjectType: 'object', subjectId: objectId }, orderBy: { id: 'asc' } }),
  ]);
  if (!object && reviews.length === 0 && audits.length === 0)
    throw new NotFoundError(`no object ${objectId} and no record of one`);
  const events = [
    ...reviews.map((r) => ({
      at: r.createdAt,
      kind: 'review' as const,
      action: r.action,
      actor_id: r.reviewerId,
      reviewer: r.reviewer,
      batch_id: r.batchId,
      before: r.before,
      after: r.after,
      time_spent_ms: r.timeSpentMs,
    })),
    ...audits.map((a) => ({
      at: a.createdAt,
      kind: 'audit' as const,
      action: a.action,
      actor_id: a.actorId,
      request_id: a.requestId,
      detail: a.detail,
    })),
  ].sort((a, b) => a.at.getTime() - b.at.getTime());
  return {
    object_id: objectId,
    exists: object !== null,
    version: object?.version ?? null,
    events: events.map((e) => ({ ...e, at: e.at.toISOString() })),
  };
}

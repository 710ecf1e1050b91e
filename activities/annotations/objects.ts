import { randomUUID } from 'node:crypto';
import {
  normaliseShape,
  clipMask,
  enclosingBox,
  unionBox,
  type Box,
  type ShapeIn,
} from '../../core/geometry';
import { ConflictError, NotFoundError } from '../../core/errors';
import {
  clampStateForRole,
  parseObjectState,
  stateAfterEdit,
  type CallerRole,
} from '../../core/objects/states';
import { Prisma, type AnnoObject } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { resolveClass } from './classes';
import { withNewMasks, type MaskStore } from './masks';

export type Tx = Db | Prisma.TransactionClient;

/** Who writes, for audit and review records. */
export interface Actor {
  userId: string;
  role: CallerRole;
  requestId: string;
}

type ObjectWithClass = AnnoObject & { class: { name: string } };

/** An object as the API shows it (snake_case, the spec's field names). */
export function objectOut(o: ObjectWithClass) {
  return {
    id: o.id,
    frame_id: o.frameId,
    bbox: o.bbox,
    rot_deg: o.rotDeg,
    rbox: o.rbox.length === 4 ? o.rbox : null,
    class_id: o.classId,
    class_name: o.class.name,
    conf: o.conf,
    attrs: o.attrs,
    mask_uri: o.maskUri,
    polyline: o.polyline,
    cuboid_3d: o.cuboid3d,
    keypoints: o.keypoints,
    source: o.source,
    state: o.state,
    version: o.version,
    track_id: o.trackId,
    job_id: o.jobId,
    created_at: o.createdAt.toISOString(),
    updated_at: o.updatedAt.toISOString(),
  };
}

const withClass = { class: { select: { name: true } } } as const;

/** The pieces of an object a snapshot (checkpoint, review `before`) keeps. */
export function objectSnapshot(o: AnnoObject) {
  return {
    id: o.id,
    bbox: o.bbox,
    rot_deg: o.rotDeg,
    rbox: o.rbox,
    class_id: o.classId,
    conf: o.conf,
    attrs: o.attrs,
    mask_uri: o.maskUri,
    polyline: o.polyline,
    cuboid_3d: o.cuboid3d,
    keypoints: o.keypoints,
    source: o.source,
    state: o.state,
    version: o.version,
    track_id: o.trackId,
    job_id: o.jobId,
  };
}

export async function getObject(db: Tx, id: string): Promise<ObjectWithClass> {
  const o = await db.annoObject.findUnique({ where: { id }, include: withClass });
  if (!o) throw new NotFoundError(`no object ${id}`);
  return o;
}

export async function getFrame(db: Tx, id: string) {
  const frame = await db.frame.findUnique({ where: { id } });
  if (!frame) throw new NotFoundError(`no frame ${id}`);
  return frame;
}

const isoUtc = (col: Prisma.Sql) =>
  Prisma.sql`to_char(${col} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * `objectOut` done by PostgreSQL: a frame's objects come back as one JSON text, so listing 1,000
 * objects costs no per-row decoding and re-encoding in Node (bench/annotations.ts).
 * test/annotations.int.test.ts checks that each listed item equals `objectOut` of the object.
 */
const OBJECT_JSON = Prisma.sql`json_build_object(
  'id', o.id, 'frame_id', o.frame_id, 'bbox', o.bbox, 'rot_deg', o.rot_deg,
  'rbox', CASE WHEN cardinality(o.rbox) = 4 THEN to_json(o.rbox) END,
  'class_id', o.class_id, 'class_name', c.name, 'conf', o.conf, 'attrs', o.attrs, 'mask_uri', o.mask_uri,
  'polyline', o.polyline, 'cuboid_3d', o.cuboid_3d, 'keypoints', o.keypoints, 'source', o.source,
  'state', o.state, 'version', o.version, 'track_id', o.track_id, 'job_id', o.job_id,
  'created_at', ${isoUtc(Prisma.sql`o.created_at`)}, 'updated_at', ${isoUtc(Prisma.sql`o.updated_at`)})`;

/** A frame's objects, oldest first, as a JSON array text and its length. */
export async function listFrameObjectsJson(
  db: Tx,
  frameId: string,
): Promise<{ json: string; count: number }> {
  await getFrame(db, frameId);
  const [row] = await db.$queryRaw<Array<{ json: string; count: number }>>`
    SELECT coalesce(json_agg(${OBJECT_JSON} ORDER BY o.created_at, o.id), '[]')::text AS json, count(*)::int AS count
    FROM objects o JOIN ontology_classes c ON c.id = o.class_id
    WHERE o.frame_id = ${frameId}::uuid`;
  return row!;
}

export interface CreateObjectInput extends ShapeIn {
  class_name: string;
  attrs: Record<string, unknown>;
  cuboid_3d: Record<string, unknown> | null;
  keypoints: Record<string, number[]> | null;
  idem_key: string | null;
  job_id: string | null;
  state: string;
}

export interface CreatedObject {
  object: ObjectWithClass;
  /** True when an earlier request with the same idem_key made the object. */
  replayed: boolean;
  stateRequested: string;
  clipped: boolean;
}

const jsonOrNull = (v: unknown) =>
  v === null || v === undefined ? Prisma.DbNull : (v as Prisma.InputJsonValue);

const isUniqueViolation = (err: unknown): boolean =>
  err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002';

async function replay(db: Db, idemKey: string, frameId: string): Promise<ObjectWithClass | null> {
  const existing = await db.annoObject.findUnique({ where: { idemKey }, include: withClass });
  if (existing && existing.frameId !== frameId)
    throw new ConflictError(`idem_key ${idemKey} was used for an object on another frame`);
  return existing;
}

/**
 * Creates an object: state checked (400) and clamped by role, geometry validated against the
 * frame, the mask blob written first and removed again if the row cannot be written. A retry with
 * the same idem_key returns the first object.
 */
export async function createObject(
  db: Db,
  masks: MaskStore,
  frameId: string,
  input: CreateObjectInput,
  actor: Actor,
): Promise<CreatedObject> {
  const requested = parseObjectState(input.state, 'body.state');
  const { state } = clampStateForRole(requested, actor.role);
  const replayOf = async (): Promise<CreatedObject | null> => {
    const first = input.idem_key ? await replay(db, input.idem_key, frameId) : null;
    return first ? { object: first, replayed: true, stateRequested: requested, clipped: false } : null;
  };
  const earlier = await replayOf();
  if (earlier) return earlier;

  const frame = await getFrame(db, frameId);
  const cls = await resolveClass(db, input.class_name);
  const shape = normaliseShape(input, frame);
  const id = randomUUID();
  const docs = shape.mask ? [{ object_id: id, version: 1, polygons: shape.mask }] : [];
  try {
    const object = await withNewMasks(masks, docs, (uris) =>
      db.$transaction(async (tx) => {
        const created = await tx.annoObject.create({
          data: {
            id,
            frameId,
            bbox: shape.bbox,
            rotDeg: shape.rotDeg,
            rbox: shape.rbox ?? [],
            classId: cls.id,
            conf: null,
            attrs: input.attrs as Prisma.InputJsonValue,
            maskUri: uris.get(id) ?? null,
            polyline: jsonOrNull(shape.polyline),
            cuboid3d: jsonOrNull(input.cuboid_3d),
            keypoints: jsonOrNull(input.keypoints),
            source: 'human',
            state,
            idemKey: input.idem_key,
            jobId: input.job_id,
          },
          include: withClass,
        });
        await recordAudit(tx, {
          actorId: actor.userId,
          action: 'object.created',
          subjectType: 'object',
          subjectId: id,
          detail: {
            frame_id: frameId,
            class: cls.name,
            state,
            state_requested: requested,
            clipped: shape.clipped,
          },
          requestId: actor.requestId,
        });
        return created;
      }),
    );
    return { object, replayed: false, stateRequested: requested, clipped: shape.clipped };
  } catch (err) {
    // Two retries racing with one idem_key: the loser answers with the winner's object.
    if (isUniqueViolation(err) && input.idem_key) {
      const winner = await replayOf();
      if (winner) return winner;
    }
    throw err;
  }
}

/** Hard delete (spec Versioning 6); the mask blob goes once the row is gone. */
export async function deleteObject(db: Db, masks: MaskStore, id: string, actor: Actor): Promise<void> {
  const gone = await db.$transaction(async (tx) => {
    const o = await tx.annoObject.findUnique({ where: { id } });
    if (!o) throw new NotFoundError(`no object ${id}`);
    await tx.annoObject.delete({ where: { id } });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'object.deleted',
      subjectType: 'object',
      subjectId: id,
      detail: { frame_id: o.frameId, before: objectSnapshot(o) } as Prisma.InputJsonValue,
      requestId: actor.requestId,
    });
    return o;
  });
  await masks.remove([gone.maskUri]);
}

/**
 * Replaces an object's mask: a new blob under the next version, the row (bbox re-derived as the
 * enclosure of the mask and any polyline) and a review record in one transaction, then the old
 * blob is removed. `expectedVersion` mismatch → 409.
 */
export async function replaceMask(
  db: Db,
  masks: MaskStore,
  id: string,
  polygons: number[][],
  expectedVersion: number | null,
  actor: Actor & { reviewer: string },
): Promise<ObjectWithClass> {
  const current = await getObject(db, id);
  if (expectedVersion !== null && expectedVersion !== current.version) {
    throw new ConflictError(`object ${id} is at version ${current.version}, not ${expectedVersion}`, {
      conflicts: [{ object_id: id, expected: expectedVersion, actual: current.version }],
    });
  }
  const frame = await getFrame(db, current.frameId);
  const { rings } = clipMask(polygons, frame, 'body.polygons');
  const boxes: Box[] = [enclosingBox(rings.flat())];
  if (Array.isArray(current.polyline)) boxes.push(enclosingBox((current.polyline as number[][]).flat()));
  const next = current.version + 1;
  // New geometry from someone who may not judge it sends a judged object back to review.
  const { state } = stateAfterEdit(current.state, actor.role);
  const updated = await withNewMasks(masks, [{ object_id: id, version: next, polygons: rings }], (uris) =>
    db.$transaction(async (tx) => {
      const res = await tx.annoObject.updateMany({
        where: { id, version: current.version },
        data: { maskUri: uris.get(id)!, bbox: unionBox(boxes), source: 'human', version: next, state },
      });
      if (res.count === 0)
        throw new ConflictError(`object ${id} changed meanwhile; reload it`, {
          conflicts: [{ object_id: id, expected: current.version }],
        });
      const after = await tx.annoObject.findUniqueOrThrow({ where: { id }, include: withClass });
      const provenance = await tx.provenance.findFirst({
        where: { objectId: id },
        orderBy: { createdAt: 'desc' },
      });
      await tx.review.create({
        data: {
          objectId: id,
          reviewerId: actor.userId,
          reviewer: actor.reviewer,
          action: 'mask',
          before: JSON.parse(
            JSON.stringify({ ...objectSnapshot(current), provenance }),
          ) as Prisma.InputJsonValue,
          after: objectSnapshot(after) as unknown as Prisma.InputJsonValue,
        },
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'object.mask.replaced',
        subjectType: 'object',
        subjectId: id,
        detail: { version: next, mask_uri: after.maskUri, rings: rings.length },
        requestId: actor.requestId,
      });
      return after;
    }),
  );
  await masks.remove([current.maskUri]);
  return updated;
}

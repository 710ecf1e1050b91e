import { createMaskStore } from '../../../activities/annotations/masks';
import {
  createObject,
  deleteObject,
  getFrame,
  getObject,
  listFrameObjectsJson,
  objectOut,
  replaceMask,
} from '../../../activities/annotations/objects';
import { createCropFrames, cropJpeg, cropSheet, loadFrameImage } from '../../../activities/annotations/crops';
import { recordPiiAccess } from '../../../activities/inbox/pii-access';
import { createBoxClassifier } from '../../../activities/detect/box-classifier';
import { clipBox } from '../../../core/geometry';
import { NotFoundError } from '../../../core/errors';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { CropQuery } from '../../http/shapes';
import { ClassifyIn, CreateObjectIn, CropSheetIn, MaskIn } from './validators';

/**
 * The `objects` group's annotation routes (docs/annotations.md). GET /api/frames/{frame_id} and
 * its image are served beside these from ./frames.ts.
 */
export function createObjectsRoutes(deps: AppDeps): RouteGroup {
  const { db, storage } = deps;
  const masks = createMaskStore(storage);
  const classifier = createBoxClassifier(deps.config);
  const cropFrames = createCropFrames(storage);
  return new RouteGroup('objects')
    .post(
      '/api/objects/classify',
      {
        summary:
          'Suggest ontology classes for a box drawn on a frame, from the closed-set detector run on the box region',
        access: 'annotator',
        body: { name: 'ClassifyIn', schema: ClassifyIn },
        statuses: {
          404: 'no such frame, or its image is missing',
          503: 'the closed-set detector model is missing or does not fit',
        },
      },
      async ({ body }) => {
        const frame = await getFrame(db, body.frame_id);
        const [x1, y1, x2, y2] = clipBox(body.box, frame, 'body.box').box;
        const image = await loadFrameImage(storage, frame);
        const { model, candidates } = await classifier.classify(image, [x1, y1, x2, y2]);
        const classes = await db.ontologyClass.findMany({
          where: { name: { in: candidates.map((c) => c.className) } },
        });
        const idOf = new Map(classes.map((c) => [c.name, c.id]));
        return {
          frame_id: frame.id,
          box: [x1, y1, x2, y2],
          model,
          candidates: candidates.map((c) => ({
            class_id: idOf.get(c.className) ?? null,
            class_name: c.className,
            score: c.score,
            iou: c.iou,
          })),
        };
      },
    )
    .post(
      '/api/frames/{frame_id}/objects',
      {
        summary:
          "Create an object of any shape on a frame; state defaults to accepted and is clamped by the caller's role",
        access: 'annotator',
        params: uuidParams('frame_id'),
        body: { name: 'CreateObjectIn', schema: CreateObjectIn },
        successStatus: 201,
        statuses: {
          400: 'state outside the allowed list',
          404: 'no such frame',
          409: 'idem_key used on another frame',
        },
      },
      async ({ params, body, principal, req, res }) => {
        const frameId = params.frame_id;
        const created = await createObject(db, masks, frameId, body, actorOf(principal, req));
        if (created.replayed) res.setHeader('Idempotent-Replayed', 'true');
        return {
          ...objectOut(created.object),
          state_requested: created.stateRequested,
          clipped: created.clipped,
        };
      },
    )
    .get(
      '/api/frames/{frame_id}/objects',
      {
        summary: "A frame's objects, every shape, oldest first",
        access: 'annotator',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame' },
        // The objects' JSON is built by PostgreSQL and sent as it comes, not parsed and re-serialised.
        respondsItself: { contentType: 'application/json' },
      },
      async ({ params, res }) => {
        const { json, count } = await listFrameObjectsJson(db, params.frame_id);
        res.type('application/json').send(`{"items":${json},"count":${count}}`);
      },
    )
    .get(
      '/api/objects/{object_id}',
      {
        summary: 'One object, with its mask polygons read from the object store',
        access: 'annotator',
        params: uuidParams('object_id'),
        statuses: { 404: 'no such object' },
      },
      async ({ params }) => {
        const o = await getObject(db, params.object_id);
        const mask = o.maskUri ? await masks.read(o.maskUri) : null;
        return { ...objectOut(o), mask_polygons: mask?.polygons ?? null };
      },
    )
    .delete(
      '/api/objects/{object_id}',
      {
        summary: 'Delete an object and its mask blob (hard delete)',
        access: 'reviewer',
        params: uuidParams('object_id'),
        statuses: { 404: 'no such object' },
      },
      async ({ params, principal, req }) => {
        const id = params.object_id;
        await deleteObject(db, masks, id, actorOf(principal, req));
        return { id, deleted: true };
      },
    )
    .put(
      '/api/objects/{object_id}/mask',
      {
        summary: "Replace an object's mask polygons (one blob per object); bumps version",
        access: 'annotator',
        params: uuidParams('object_id'),
        body: { name: 'MaskIn', schema: MaskIn },
        statuses: { 404: 'no such object', 409: 'expected_version mismatch' },
      },
      async ({ params, body, principal, req }) => {
        const o = await replaceMask(db, masks, params.object_id, body.polygons, body.expected_version, {
          ...actorOf(principal, req),
          reviewer: principal.email,
        });
        return { ...objectOut(o), mask_polygons: (await masks.read(o.maskUri!)).polygons };
      },
    )
    .get(
      '/api/objects/{object_id}/crop',
      {
        summary: "The object's padded crop as JPEG (from the redacted frame when there is one)",
        access: 'annotator',
        params: uuidParams('object_id'),
        query: CropQuery,
        mediaToken: true,
        statuses: { 404: 'no such object or frame image' },
        respondsItself: { contentType: 'image/jpeg' },
      },
      async ({ params, query, res, principal, req }) => {
        const o = await getObject(db, params.object_id);
        const frame = await getFrame(db, o.frameId);
        const jpeg = await cropJpeg(
          await cropFrames.get(frame),
          frame,
          o.bbox,
          query.pad,
          query.size ?? null,
        );
        // Cut from the original when the frame has no redacted copy yet.
        await recordPiiAccess(
          db,
          { userId: principal.userId, ip: req.ip },
          'GET /api/objects/{object_id}/crop',
          [frame].filter((f) => !f.redactedUri),
        );
        res.type('image/jpeg').send(jpeg);
      },
    )
    .post(
      '/api/objects/crops',
      {
        summary: "A crop sheet: the objects' crops in a grid, row-major in the order given",
        access: 'annotator',
        body: { name: 'CropSheetIn', schema: CropSheetIn },
        statuses: { 404: 'an object does not exist' },
        respondsItself: { contentType: 'image/jpeg' },
      },
      async ({ body, res, principal, req }) => {
        const objects = await db.annoObject.findMany({
          where: { id: { in: body.object_ids } },
          include: { frame: true },
        });
        const byId = new Map(objects.map((o) => [o.id, o]));
        const missing = body.object_ids.filter((id) => !byId.has(id));
        if (missing.length) throw new NotFoundError(`${missing.length} object(s) do not exist`, { missing });
        const sheet = await cropSheet(
          cropFrames,
          body.object_ids.map((id) => ({ frame: byId.get(id)!.frame, box: byId.get(id)!.bbox })),
          body,
        );
        await recordPiiAccess(
          db,
          { userId: principal.userId, ip: req.ip },
          'POST /api/objects/crops',
          objects.map((o) => o.frame).filter((f) => !f.redactedUri),
        );
        res.setHeader('X-Crop-Grid', `${sheet.cols}x${sheet.rows}`);
        res.type('image/jpeg').send(sheet.jpeg);
      },
    );
}

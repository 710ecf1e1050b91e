import { z } from 'zod';
import {
  checkpointOut,
  deleteCheckpoint,
  getCheckpoint,
  objectHistory,
  restoreCheckpoint,
  saveCheckpoint,
} from '../../../activities/annotations/checkpoints';
import { createMaskStore } from '../../../activities/annotations/masks';
import { getFrame } from '../../../activities/annotations/objects';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { actorOf } from '../../http/actor';

export const CheckpointIn = z.strictObject({
  name: z.string().trim().min(1).max(200),
  note: z.string().max(2000).nullable().default(null),
});

/** Named saves of a frame's annotation state, and an object's history (docs/annotations.md). */
export function createCheckpointRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const masks = createMaskStore(deps.storage);
  return new RouteGroup('checkpoints')
    .post(
      '/api/frames/{frame_id}/checkpoints',
      {
        summary: "Save the frame's annotation state under a name",
        access: 'annotator',
        params: uuidParams('frame_id'),
        body: { name: 'CheckpointIn', schema: CheckpointIn },
        successStatus: 201,
        statuses: { 404: 'no such frame' },
      },
      async ({ params, body, principal, req }) =>
        checkpointOut(
          await saveCheckpoint(db, masks, params.frame_id, body.name, body.note, actorOf(principal, req)),
        ),
    )
    .get(
      '/api/frames/{frame_id}/checkpoints',
      {
        summary: "A frame's checkpoints, newest first",
        access: 'annotator',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame' },
      },
      async ({ params }) => {
        const frameId = params.frame_id;
        await getFrame(db, frameId);
        const items = await db.checkpoint.findMany({
          where: { frameId },
          orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
        });
        return { items: items.map(checkpointOut) };
      },
    )
    .get(
      '/api/checkpoints/{checkpoint_id}',
      {
        summary: 'One checkpoint with its saved objects',
        access: 'annotator',
        params: uuidParams('checkpoint_id'),
        statuses: { 404: 'no such checkpoint' },
      },
      async ({ params }) => {
        const c = await getCheckpoint(db, params.checkpoint_id);
        return { ...checkpointOut(c), objects: (c.snapshot as { objects: unknown[] }).objects };
      },
    )
    .post(
      '/api/checkpoints/{checkpoint_id}/restore',
      {
        summary:
          'Restore the frame to the checkpoint (one transaction; the state before is saved as an automatic checkpoint)',
        access: 'reviewer',
        params: uuidParams('checkpoint_id'),
        statuses: { 404: 'no such checkpoint' },
      },
      async ({ params, principal, req }) =>
        restoreCheckpoint(db, masks, params.checkpoint_id, actorOf(principal, req)),
    )
    .delete(
      '/api/checkpoints/{checkpoint_id}',
      {
        summary: 'Delete a checkpoint',
        access: 'reviewer',
        params: uuidParams('checkpoint_id'),
        statuses: { 404: 'no such checkpoint' },
      },
      async ({ params, principal, req }) => {
        const id = params.checkpoint_id;
        await deleteCheckpoint(db, id, actorOf(principal, req));
        return { id, deleted: true };
      },
    )
    .get(
      '/api/objects/{object_id}/history',
      {
        summary: "An object's reviews and audit entries, oldest first (kept after deletion)",
        access: 'annotator',
        params: uuidParams('object_id'),
        statuses: { 404: 'no object and no record of one' },
      },
      async ({ params }) => objectHistory(db, params.object_id),
    );
}

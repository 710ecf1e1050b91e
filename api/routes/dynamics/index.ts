import { z } from 'zod';
import { computeDynamics, frameDynamics, objectDynamics } from '../../../activities/dynamics';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** The spec shows no body for compute; ours (docs/dynamics.md): a session, or a list of tracks. */
const DynamicsComputeIn = z
  .strictObject({
    session_id: z.uuid().optional().meta({ description: 'every track of this session' }),
    track_ids: z
      .array(z.uuid())
      .min(1)
      .max(1000)
      .optional()
      .meta({ description: 'these tracks (of any sessions)' }),
  })
  .refine((b) => (b.session_id === undefined) !== (b.track_ids === undefined), {
    message: 'give either session_id or track_ids',
  });

/** Per-object motion from tracks (docs/dynamics.md). Computing is the annotator's, like proposing intent. */
export function createDynamicsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('dynamics')
    .post(
      '/api/dynamics/compute',
      {
        summary:
          "Computes each tracked object's motion from its track (image px/s, px/s², heading; ground m/s, m/s² and range in metres where the camera model and the frame's ego speed allow) and replaces the scope's stored rows in one transaction; answers the counts. Audited",
        access: 'annotator',
        body: { name: 'DynamicsComputeIn', schema: DynamicsComputeIn },
        statuses: { 404: 'no such session, or a listed track does not exist' },
      },
      ({ body, principal, req }) => computeDynamics(db, body, actorOf(principal, req)),
    )
    .get(
      '/api/dynamics/frame/{frame_id}',
      {
        summary: "The stored dynamics of a frame's tracked objects",
        access: 'annotator',
        params: uuidParams('frame_id'),
        statuses: { 404: 'no such frame' },
      },
      ({ params }) => frameDynamics(db, params.frame_id),
    )
    .get(
      '/api/dynamics/object/{object_id}',
      {
        summary: 'The stored dynamics of one object',
        access: 'annotator',
        params: uuidParams('object_id'),
        statuses: { 404: 'no such object, or no dynamics stored for it (compute them first)' },
      },
      ({ params }) => objectDynamics(db, params.object_id),
    );
}

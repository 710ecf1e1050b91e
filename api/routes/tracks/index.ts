import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import { retrackWorkflowId, trackOut } from '../../../activities/tracks/retrack';
import { NotFoundError } from '../../../core/errors';
import { DEFAULT_TRACKER_SETTINGS, TRACKER_VERSION, TrackerSettings } from '../../../core/tracking';
import { retrackWorkflow } from '../../../workflows/retrack';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

/** The retrack request (the spec does not show its body; docs/tracks.md). */
export const RetrackIn = z.strictObject({
  session_id: z.uuid(),
  settings: TrackerSettings.optional().meta({
    description: 'ByteTrack settings; absent fields keep their defaults',
  }),
});

/** The `tracks` group (docs/tracks.md): so far retracking a session and reading or deleting a track. */
export function createTrackRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  const trackParams = uuidParams('track_id');
  return new RouteGroup('tracks')
    .post(
      '/api/tracks/retrack',
      {
        summary: `Re-runs association for a session as workflow retrack-<session_id>: ByteTrack (${TRACKER_VERSION}) per class over its objects in frame order replaces the session's tracks, and each object names its track. 202, Location: the session`,
        access: 'reviewer',
        body: { name: 'RetrackIn', schema: RetrackIn },
        successStatus: 202,
        statuses: {
          404: 'no such session',
          409: 'a retrack of the session is already running',
          503: 'the workflow service does not answer',
        },
      },
      async ({ body, principal, req, res }) => {
        const session = await db.session.findUnique({ where: { id: body.session_id }, select: { id: true } });
        if (!session) throw new NotFoundError(`no session ${body.session_id}`);
        const actor = actorOf(principal, req);
        const settings = body.settings ?? DEFAULT_TRACKER_SETTINGS;
        const started = await startWorkflow(deps, res, {
          workflow: retrackWorkflow,
          workflowId: retrackWorkflowId(session.id),
          args: [{ sessionId: session.id, settings, actorId: actor.userId }],
          location: `/api/sessions/${session.id}`,
          what: `a retrack of session ${session.id}`,
        });
        return { session_id: session.id, tracker_version: TRACKER_VERSION, settings, ...started };
      },
    )
    .get(
      '/api/tracks/{track_id}',
      {
        summary:
          'A track: its class, trajectory (per frame: frame, time, object, box, score), the switches the tracker reported itself (never checked against ground truth) and its tracker version',
        access: 'annotator',
        params: trackParams,
        statuses: { 404: 'no such track' },
      },
      async ({ params }) => {
        const track = await db.track.findUnique({ where: { id: params.track_id } });
        if (!track) throw new NotFoundError(`no track ${params.track_id}`);
        return trackOut(track);
      },
    )
    .delete(
      '/api/tracks/{track_id}',
      {
        summary: 'Deletes a track: its objects stay, no longer linked to a track. Audited',
        access: 'reviewer',
        params: trackParams,
        statuses: { 404: 'no such track' },
      },
      async ({ params, principal, req }) => {
        const actor = actorOf(principal, req);
        return db.$transaction(async (tx) => {
          const track = await tx.track.findUnique({ where: { id: params.track_id } });
          if (!track) throw new NotFoundError(`no track ${params.track_id}`);
          const unlinked = await tx.annoObject.updateMany({
            where: { trackId: track.id },
            data: { trackId: null },
          });
          await tx.track.delete({ where: { id: track.id } });
          await recordAudit(tx, {
            actorId: actor.userId,
            action: 'track.deleted',
            subjectType: 'track',
            subjectId: track.id,
            detail: { session_id: track.sessionId, objects_unlinked: unlinked.count },
            requestId: actor.requestId,
          });
          return { track_id: track.id, deleted: true, objects_unlinked: unlinked.count };
        });
      },
    );
}

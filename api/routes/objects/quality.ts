import { z } from 'zod';
import {
  BACKFILL_SYNC_MAX,
  backfillObjectQualityPages,
  backfillSize,
  backfillWorkflowId,
  objectQuality,
  recordBackfill,
} from '../../../activities/quality/object-quality';
import { objectQualityBackfillWorkflow } from '../../../workflows/object-quality-backfill';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { startWorkflow } from '../../http/start-workflow';

export const ObjectQualityBackfillIn = z.strictObject({
  scope: z
    .enum(['missing', 'all'])
    .default('missing')
    .meta({ description: '`missing`: objects without a stored quality; `all`: recompute every one' }),
  session_id: z.uuid().nullish().meta({ description: "only this session's objects" }),
  background: z
    .boolean()
    .default(false)
    .meta({ description: `run as a workflow even when at most ${BACKFILL_SYNC_MAX} objects are due` }),
});

/** The quality routes of the `objects` group (docs/quality-measure.md). */
export function createObjectQualityRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('objects')
    .get(
      '/api/objects/{object_id}/quality',
      {
        summary:
          "An object's quality: provenance agreement, entropy and flags, critic vetoes, review history, control verdict, open error candidates, gold memberships, calibrated confidence under the active calibration, and a score in [0, 1] combining them; stores (refreshes) its object_quality row",
        access: 'annotator',
        params: uuidParams('object_id'),
        statuses: { 404: 'no such object' },
      },
      async ({ params }) => objectQuality(db, params.object_id),
    )
    .post(
      '/api/objects/quality/backfill',
      {
        summary: `Compute object quality for the objects missing it (or all, or a session's): in the request up to ${BACKFILL_SYNC_MAX} objects, else (or with background) as workflow objectQualityBackfillWorkflow (202, Location: the eval operations log)`,
        access: 'reviewer',
        body: { name: 'ObjectQualityBackfillIn', schema: ObjectQualityBackfillIn },
        alsoSucceeds: { 202: 'started as a workflow' },
        statuses: { 404: 'no such session', 409: 'a backfill of this scope is already running' },
      },
      async ({ body, principal, req, res }) => {
        const input = {
          scope: body.scope,
          sessionId: body.session_id ?? null,
          actorId: principal.userId,
          requestId: String(req.id),
        };
        const due = await backfillSize(db, input);
        if (body.background || due > BACKFILL_SYNC_MAX) {
          const started = await startWorkflow(deps, res, {
            workflow: objectQualityBackfillWorkflow,
            workflowId: backfillWorkflowId(input),
            args: [input],
            location: '/api/eval/operations?op_type=object_quality_backfill',
            what: `an object quality backfill of ${input.sessionId ?? 'the corpus'} (${input.scope})`,
          });
          return { ...started, scope: body.scope, session_id: input.sessionId, due };
        }
        const done = await backfillObjectQualityPages(db, input, { after: null, computed: 0 });
        const op = await recordBackfill(db, input, done.computed, null);
        return {
          operation_id: op.id,
          scope: body.scope,
          session_id: input.sessionId,
          due,
          computed: done.computed,
        };
      },
    );
}

import { z } from 'zod';
import { MIN_CONTROL_SAMPLE } from '../../../core/control';
import { NotFoundError } from '../../../core/errors';
import {
  activateThresholdFit,
  createThresholdFit,
  routingDefaults,
  thresholdFitOut,
} from '../../../activities/autolabel/threshold-fits';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** Body of POST /api/fusion/thresholds/fit (the spec shows none; docs/autolabel.md). */
export const ThresholdFitIn = z.strictObject({
  target_precision: z
    .number()
    .gt(0.5)
    .lt(1)
    .default(0.95)
    .meta({ description: 'Laplace-smoothed precision the auto-accepts above a threshold must reach' }),
  session_ids: z
    .array(z.uuid())
    .min(1)
    .max(1000)
    .nullable()
    .default(null)
    .meta({ description: "only these sessions' verdicts; null: all" }),
});
const ListQuery = z.strictObject({ limit: z.coerce.number().int().min(1).max(200).default(20) });

/**
 * The threshold part of the `fusion` group: fit auto-accept thresholds from human verdicts on
 * machine objects, read fits, and make one the active routing default of new auto-label jobs.
 */
export function createFusionThresholdRoutes(deps: AppDeps): RouteGroup {
  const { db, config } = deps;
  return new RouteGroup('fusion')
    .get(
      '/api/fusion/thresholds',
      {
        summary:
          'Threshold fits, newest first, with the active one and the routing defaults new auto-label jobs start from',
        access: 'annotator',
        query: ListQuery,
      },
      async ({ query }) => {
        const [fits, active, defaults] = await Promise.all([
          db.thresholdFit.findMany({ orderBy: [{ createdAt: 'desc' }, { id: 'asc' }], take: query.limit }),
          db.thresholdFit.findFirst({ where: { active: true } }),
          routingDefaults(db, config),
        ]);
        return {
          active: active ? thresholdFitOut(active) : null,
          routing_defaults: defaults,
          items: fits.map(thresholdFitOut),
        };
      },
    )
    .post(
      '/api/fusion/thresholds/fit',
      {
        summary: `Fits auto-accept thresholds, per class and overall, from control verdicts and first reviews of machine objects: the lowest confidence whose objects above it reach the target precision, over at least ${MIN_CONTROL_SAMPLE} verdicts`,
        access: 'reviewer',
        body: { name: 'ThresholdFitIn', schema: ThresholdFitIn },
        successStatus: 201,
      },
      async ({ body, principal, req, res }) => {
        const fit = await createThresholdFit(db, {
          targetPrecision: body.target_precision,
          minSamples: MIN_CONTROL_SAMPLE,
          sessionIds: body.session_ids,
          actorId: principal.userId,
          requestId: String(req.id),
        });
        res.setHeader('Location', `/api/fusion/thresholds/${fit.id}`);
        return thresholdFitOut(fit);
      },
    )
    .get(
      '/api/fusion/thresholds/{fit_id}',
      {
        summary: 'One threshold fit',
        access: 'annotator',
        params: uuidParams('fit_id'),
        statuses: { 404: 'no such fit' },
      },
      async ({ params }) => {
        const id = params.fit_id;
        const fit = await db.thresholdFit.findUnique({ where: { id } });
        if (!fit) throw new NotFoundError(`no threshold fit ${id}`);
        return thresholdFitOut(fit);
      },
    )
    .post(
      '/api/fusion/thresholds/{fit_id}/activate',
      {
        summary:
          'Makes this fit the active one: new auto-label jobs route with its thresholds (jobs already started keep theirs)',
        access: 'admin',
        params: uuidParams('fit_id'),
        statuses: { 404: 'no such fit', 409: 'the fit fitted no threshold' },
      },
      async ({ params, principal, req }) => {
        const fit = await activateThresholdFit(db, params.fit_id, {
          actorId: principal.userId,
          requestId: String(req.id),
        });
        return { ...thresholdFitOut(fit), routing_defaults: await routingDefaults(db, config) };
      },
    );
}

import { z } from 'zod';
import { NotFoundError } from '../../../core/errors';
import { OBJECT_STATES, parseObjectState } from '../../../core/objects/states';
import { toScenarioJson } from '../../../core/scenario/json';
import { buildScenario, type ImageSize } from '../../../core/scenario/model';
import { toOpenScenarioXml } from '../../../core/scenario/openscenario';
import type { AppDeps } from '../../deps';
import { findSession } from '../../http/session-reads';
import { RouteGroup, uuidParams } from '../../http/route-group';

/** Every state but `rejected`: a rejected box is one a reviewer said is not there. */
export const SCENARIO_DEFAULT_STATES = OBJECT_STATES.filter((s) => s !== 'rejected');

export const ScenarioQuery = z.strictObject({
  format: z.enum(['xosc', 'json']).default('xosc'),
  /** Comma list of object states; a state outside the allowed list is a 400 (spec Errors). */
  states: z.string().max(200).optional(),
});

/**
 * Scenario exports in the `export` group (docs/scenario.md): a session's objects over time as
 * ASAM OpenSCENARIO XML or a JSON scenario description, and the per-event export, which answers
 * 404 until driving events are recorded.
 */
export function createScenarioExportRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('export')
    .get(
      '/api/export/scenario/session/{session_id}',
      {
        summary:
          "A session's objects over time as a scenario: ASAM OpenSCENARIO 1.2 XML (format=xosc, default) or a JSON scenario description (format=json); one entity per track, image-plane pixel positions",
        access: 'reviewer',
        params: uuidParams('session_id'),
        query: ScenarioQuery,
        respondsItself: { contentType: 'application/xml' },
        statuses: { 400: 'a state outside the allowed list', 404: 'no such session' },
      },
      async ({ params, query, res }) => {
        const states = query.states
          ? query.states.split(',').map((s) => parseObjectState(s.trim(), 'query.states'))
          : SCENARIO_DEFAULT_STATES;
        const session = await findSession(db, params.session_id);
        const sessionId = session.id;
        const [objects, classes, frameSizes] = await Promise.all([
          db.annoObject.findMany({
            where: { frame: { sessionId }, state: { in: states } },
            select: {
              id: true,
              trackId: true,
              classId: true,
              bbox: true,
              rbox: true,
              rotDeg: true,
              state: true,
              source: true,
              conf: true,
              frame: { select: { id: true, index: true, timestampMs: true } },
            },
          }),
          db.ontologyClass.findMany({ select: { id: true, name: true, l0: true, l1: true, parentId: true } }),
          db.frame.groupBy({
            by: ['width', 'height'],
            where: { sessionId },
            _count: { _all: true },
            _max: { timestampMs: true },
          }),
        ]);
        const lastTimestamps = frameSizes.map((g) => g._max.timestampMs ?? 0);
        const size: ImageSize | null =
          frameSizes.length === 1 ? { width: frameSizes[0]!.width, height: frameSizes[0]!.height } : null;
        const model = buildScenario({
          session: { id: sessionId, name: session.name },
          frames: {
            count: frameSizes.reduce((n, g) => n + g._count._all, 0),
            lastTimestampMs: lastTimestamps.length ? Math.max(...lastTimestamps) : null,
            size,
          },
          objects,
          classes,
          states,
          generatedAt: new Date(),
        });
        if (query.format === 'json') {
          res.type('application/json').send(JSON.stringify(toScenarioJson(model)));
          return;
        }
        // Written out rather than by res.attachment(), which drops the quotes from a token-only name
        // and sets a type from the extension (.xosc has none); the id is a UUID, so nothing needs escaping.
        res
          .type('application/xml')
          .set('Content-Disposition', `attachment; filename="scenario-${sessionId}.xosc"`)
          .send(toOpenScenarioXml(model));
      },
    )
    .get(
      '/api/export/scenario/event/{event_id}',
      {
        summary:
          'A driving event as a scenario; driving events are not recorded yet, so every id answers 404',
        access: 'reviewer',
        params: uuidParams('event_id'),
        statuses: { 404: 'no such driving event (none are recorded yet)' },
      },
      ({ params }) => {
        throw new NotFoundError(
          `no driving event ${params.event_id}: driving events are not recorded yet, so none can be exported`,
        );
      },
    );
}

import { z } from 'zod';
import { resolveClass } from '../../../activities/annotations/classes';
import { QUEUE_DEFAULT_STATES, reviewQueue } from '../../../activities/annotations/queue';
import { parseObjectState } from '../../../core/objects/states';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';

export const TriageQuery = z.strictObject({
  session_id: z.uuid().optional(),
  class_name: z.string().min(1).max(128).optional(),
  /** Comma-separated states; default review,submitted. */
  state: z.string().max(200).optional(),
  cursor: z.string().max(512).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** The review queue the keyboard flow and crop grids consume (docs/annotations.md). */
export function createTriageRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('triage').get(
    '/api/triage',
    {
      summary:
        'Review queue ranked by uncertainty × class rarity; filter by session, class and state; cursor paging',
      access: 'annotator',
      query: TriageQuery,
      statuses: { 400: 'state outside the allowed list' },
    },
    async ({ query }) => {
      const states = query.state
        ? query.state.split(',').map((s) => parseObjectState(s.trim(), 'query.state'))
        : [...QUEUE_DEFAULT_STATES];
      const cls = query.class_name
        ? await resolveClass(db, query.class_name, 'query.class_name', { allowRetired: true })
        : null;
      return reviewQueue(db, {
        sessionId: query.session_id ?? null,
        classId: cls?.id ?? null,
        states,
        cursor: query.cursor ?? null,
        limit: query.limit,
      });
    },
  );
}

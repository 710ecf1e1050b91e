import { z } from 'zod';
import { listActivity } from '../../../activities/inbox/activity';
import type { AppDeps } from '../../deps';
import { RouteGroup } from '../../http/route-group';
import { limitParam } from '../../http/session-reads';

const AuditQuery = z
  .strictObject({
    actor_id: z.uuid().optional(),
    action: z
      .string()
      .min(1)
      .max(200)
      .optional()
      .meta({ description: 'an action, e.g. session.consent, or a family, e.g. session.*' }),
    subject_type: z.string().min(1).max(100).optional(),
    subject_id: z.string().min(1).max(200).optional(),
    since: z.iso.datetime({ offset: true }).optional().meta({ description: 'entries at or after' }),
    until: z.iso.datetime({ offset: true }).optional().meta({ description: 'entries before' }),
    cursor: z
      .string()
      .regex(/^[1-9][0-9]{0,17}$/, 'next_cursor of the previous page')
      .optional(),
    limit: limitParam(100, 500),
  })
  .refine((q) => !q.since || !q.until || Date.parse(q.since) < Date.parse(q.until), {
    message: 'until must be after since',
    path: ['until'],
  });

/**
 * The audit-log reader of the `govern` group (docs/governance-reads.md): the activity feed's reader
 * (docs/inbox.md) for admins, over everyone. No route writes, edits or deletes the log.
 */
export function createGovernAuditRoutes(deps: AppDeps): RouteGroup {
  return new RouteGroup('govern').get(
    '/api/govern/audit',
    {
      summary:
        'The append-only audit log, newest first: filter by actor, action, subject type and id, and a time range [since, until); paged by next_cursor',
      access: 'admin',
      query: AuditQuery,
    },
    async ({ query }) =>
      listActivity(
        deps.db,
        {
          actorId: query.actor_id,
          action: query.action,
          subjectType: query.subject_type,
          subjectId: query.subject_id,
          since: query.since ? new Date(query.since) : undefined,
          until: query.until ? new Date(query.until) : undefined,
        },
        { limit: query.limit, cursor: query.cursor ? BigInt(query.cursor) : undefined },
      ),
  );
}

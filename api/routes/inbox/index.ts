import { InputError, NotAllowedError } from '../../../core/errors';
import { activitySummary, listActivity } from '../../../activities/inbox/activity';
import {
  listNotifications,
  markAllRead,
  markRead,
  unreadCount,
} from '../../../activities/inbox/notifications';
import { listPiiAccess, piiAccessSummary } from '../../../activities/inbox/pii-access';
import type { TimeWindow } from '../../../activities/inbox/reads';
import type { Principal } from '../../auth/principal';
import type { AppDeps } from '../../deps';
import { RouteGroup, uuidParams } from '../../http/route-group';
import {
  ActivityQuery,
  ActivitySummaryQuery,
  NotificationsQuery,
  PiiAccessQuery,
  PiiAccessSummaryQuery,
} from './validators';

/** Default windows of the summaries when `since` is not given (docs/inbox.md). */
const DAY_MS = 24 * 3600 * 1000;
export const ACTIVITY_SUMMARY_DAYS = 7;
export const PII_SUMMARY_DAYS = 30;

/** A summary's window: `until` defaults to now, `since` to `days` before it; an empty or reversed one is refused. */
function summaryWindow(query: TimeWindow, days: number): { since: Date; until: Date } {
  const until = query.until ?? new Date();
  const since = query.since ?? new Date(until.getTime() - days * DAY_MS);
  if (since >= until)
    throw new InputError('the window is empty: since must be before until', [
      { field: 'query.since', message: 'must be before until' },
    ]);
  return { since, until };
}

/**
 * Whose activity the caller may read: an admin anyone's (or everyone's), anyone else only their
 * own; asking for another actor's is refused rather than silently narrowed.
 */
function activityActor(principal: Principal, actorId: string | undefined): string | undefined {
  if (principal.role === 'admin') return actorId;
  if (actorId !== undefined && actorId !== principal.userId)
    throw new NotAllowedError("only an admin may read another user's activity");
  return principal.userId;
}

/** The `inbox` group: the caller's notifications, the activity feed and who viewed original pixels (docs/inbox.md). */
export function createInboxRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('inbox')
    .get(
      '/api/notifications',
      {
        summary:
          "The caller's notifications, newest first; unread=true|false filters; paged by next_cursor; `unread` is the caller's unread count",
        access: 'annotator',
        query: NotificationsQuery,
      },
      ({ query, principal }) => listNotifications(db, principal.userId, query),
    )
    .get(
      '/api/notifications/count',
      { summary: "How many of the caller's notifications are unread", access: 'annotator' },
      async ({ principal }) => ({ unread: await unreadCount(db, principal.userId) }),
    )
    .post(
      '/api/notifications/read-all',
      {
        summary: 'Mark every unread notification of the caller read; `marked` says how many were',
        access: 'annotator',
      },
      async ({ principal }) => ({ marked: await markAllRead(db, principal.userId), unread: 0 }),
    )
    .post(
      '/api/notifications/{notification_id}/read',
      {
        summary:
          'Mark one of the caller’s notifications read (again: it keeps the first read_at); another user’s is 404',
        access: 'annotator',
        params: uuidParams('notification_id'),
        statuses: { 404: 'no such notification of the caller' },
      },
      ({ params, principal }) => markRead(db, principal.userId, params.notification_id),
    )
    .get(
      '/api/activity',
      {
        summary:
          'The activity feed (the audit log), newest first: an admin sees everyone’s, anyone else only their own (403 for another actor_id); filters actor_id, action (ingest.* for a family), subject_type, subject_id, since, until; paged by next_cursor',
        access: 'annotator',
        query: ActivityQuery,
        statuses: { 403: "another actor's activity, asked for by anyone but an admin" },
      },
      ({ query, principal }) =>
        listActivity(
          db,
          {
            actorId: activityActor(principal, query.actor_id),
            action: query.action,
            subjectType: query.subject_type,
            subjectId: query.subject_id,
            since: query.since,
            until: query.until,
          },
          query,
        ),
    )
    .get(
      '/api/activity/summary',
      {
        summary: `Counts of activity per action and per actor over a window (default the last ${ACTIVITY_SUMMARY_DAYS} days), the most frequent first; the same visibility as /api/activity`,
        access: 'annotator',
        query: ActivitySummaryQuery,
        statuses: { 403: "another actor's activity, asked for by anyone but an admin" },
      },
      async ({ query, principal }) => {
        const window = summaryWindow(query, ACTIVITY_SUMMARY_DAYS);
        const summary = await activitySummary(db, {
          actorId: activityActor(principal, query.actor_id),
          action: query.action,
          ...window,
        });
        return { since: window.since.toISOString(), until: window.until.toISOString(), ...summary };
      },
    )
    .get(
      '/api/govern/pii-access',
      {
        summary:
          'Who was served original, unredacted frame pixels (frame images, crops of frames without a redacted copy), newest first; filters user_id, frame_id, session_id, since, until; paged by next_cursor',
        access: 'admin',
        query: PiiAccessQuery,
      },
      ({ query }) =>
        listPiiAccess(
          db,
          {
            userId: query.user_id,
            frameId: query.frame_id,
            sessionId: query.session_id,
            since: query.since,
            until: query.until,
          },
          query,
        ),
    )
    .get(
      '/api/govern/pii-access/summary',
      {
        summary: `Views of original pixels over a window (default the last ${PII_SUMMARY_DAYS} days): totals, per user (views, frames, sessions, first and last view) and per route`,
        access: 'admin',
        query: PiiAccessSummaryQuery,
      },
      async ({ query }) => {
        const window = summaryWindow(query, PII_SUMMARY_DAYS);
        const summary = await piiAccessSummary(db, { ...window, sessionId: query.session_id });
        return { since: window.since.toISOString(), until: window.until.toISOString(), ...summary };
      },
    );
}

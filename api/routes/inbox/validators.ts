import { z } from 'zod';
import { booleanParam, limitParam } from '../../http/session-reads';

/** Queries of the inbox group (the spec names none; docs/inbox.md). */

/** Largest page of the inbox lists. */
export const MAX_PAGE = 200;

/** An instant with its offset; year 1 or later, as PostgreSQL's timestamptz takes them. */
const Instant = z.iso
  .datetime({ offset: true, error: 'an ISO 8601 date-time with an offset (2026-01-31T08:00:00Z)' })
  .refine((v) => new Date(v).getUTCFullYear() >= 1, 'must not be before year 1')
  .transform((v) => new Date(v));

/** The next_cursor of a list ordered by a bigint id: the last id of the page before. */
const IdCursor = z
  .string()
  .regex(/^[1-9][0-9]{0,17}$/, 'not a next_cursor of this list')
  .transform((v) => BigInt(v));

const Window = {
  since: Instant.optional().meta({ description: 'from this instant (inclusive)' }),
  until: Instant.optional().meta({ description: 'up to this instant (exclusive)' }),
};

const Page = {
  limit: limitParam(50, MAX_PAGE),
  cursor: IdCursor.optional().meta({ description: "the previous page's next_cursor" }),
};

/** An action, or a family of them with a trailing `*` (`ingest.*`). */
const ActionFilter = z.string().min(1).max(200).meta({
  description: 'an action (ingest.completed), or every action it begins with when it ends in * (ingest.*)',
});

export const NotificationsQuery = z.strictObject({
  unread: booleanParam.optional().meta({ description: 'true: unread only; false: read only' }),
  limit: limitParam(50, MAX_PAGE),
  cursor: z.uuid().optional().meta({ description: "the previous page's next_cursor" }),
});

export const ActivityQuery = z.strictObject({
  actor_id: z
    .uuid()
    .optional()
    .meta({ description: 'only this actor (anyone but an admin: only themselves)' }),
  action: ActionFilter.optional(),
  subject_type: z.string().min(1).max(100).optional(),
  subject_id: z.string().min(1).max(200).optional(),
  ...Window,
  ...Page,
});

export const ActivitySummaryQuery = z.strictObject({
  actor_id: ActivityQuery.shape.actor_id,
  action: ActionFilter.optional(),
  ...Window,
});

export const PiiAccessQuery = z.strictObject({
  user_id: z.uuid().optional(),
  frame_id: z.uuid().optional(),
  session_id: z.uuid().optional(),
  ...Window,
  ...Page,
});

export const PiiAccessSummaryQuery = z.strictObject({
  session_id: z.uuid().optional(),
  ...Window,
});

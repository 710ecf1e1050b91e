import { z } from 'zod';
import { JOB_KINDS, JOB_STATES } from '../../../core/jobs/kinds';
import { limitParam } from '../../http/session-reads';

export const JobsQuery = z.strictObject({
  kind: z.enum(JOB_KINDS).optional(),
  state: z.enum(JOB_STATES).optional(),
  limit: limitParam(50, 200),
  cursor: z.string().max(256).optional().meta({ description: 'next_cursor of the previous page.' }),
});

/** The id first: of two malformed parameters, the id's error is listed first, as on every route with ids. */
export const JobParams = z.object({
  job_id: z.uuid({ error: 'must be a UUID' }),
  kind: z.enum(JOB_KINDS),
});

import { z } from 'zod';
import { limitParam } from '../../http/session-reads';

/** An admin's decision on a session's quarantine; the reason is kept with the audit record. */
export const HealthOverrideIn = z.strictObject({
  quarantined: z.boolean(),
  reason: z.string().trim().min(3).max(2000),
});

export const BoardQuery = z.strictObject({ limit: limitParam(50, 200) });
export const TrendsQuery = z.strictObject({ limit: limitParam(100, 1000) });

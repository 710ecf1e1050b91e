import { TooManyRequestsError } from '../core/errors';
import type { Db } from '../activities/db';

/**
 * Fixed-window counters kept in PostgreSQL so every API process spends one shared budget
 * (spec Authentication 8: a memory-only limiter multiplies the budget by the worker count).
 * Windows are aligned on the database clock, so processes with skewed clocks still agree.
 */
export interface RateLimitPolicy {
  max: number;
  windowSeconds: number;
}

export interface RateLimiter {
  /** Counts one hit for `subject` under `policy`; throws TooManyRequestsError past the budget. */
  consume(policy: string, subject: string): Promise<void>;
}

export function createRateLimiter(db: Db, policies: Record<string, RateLimitPolicy>): RateLimiter {
  let calls = 0;
  return {
    async consume(policyName, subject) {
      const policy = policies[policyName];
      if (!policy) throw new Error(`unknown rate-limit policy ${policyName}`);
      const w = policy.windowSeconds;
      const rows = await db.$queryRaw<Array<{ count: number; retry_after: number }>>`
        INSERT INTO rate_limit_buckets (key, window_start, count)
        VALUES (${`${policyName}:${subject}`}, to_timestamp(floor(extract(epoch FROM now()) / ${w}) * ${w}), 1)
        ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_buckets.count + 1
        RETURNING count, ceil(extract(epoch FROM window_start) + ${w} - extract(epoch FROM now()))::int AS retry_after`;
      // Expired windows are dead weight; sweep them now and then rather than on every call.
      if (++calls % 500 === 0) {
        await db.$executeRaw`DELETE FROM rate_limit_buckets WHERE window_start < now() - interval '1 day'`;
      }
      const row = rows[0]!;
      if (row.count > policy.max) {
        throw new TooManyRequestsError(
          `rate limit of ${policy.max} ${policyName} requests per ${w} s reached; retry in ${row.retry_after} s`,
          Math.max(1, row.retry_after),
        );
      }
    },
  };
}

/**
 * The retention sweep (docs/erasure.md): when it runs, and which sessions past their
 * `retention_until` it erases. Pure.
 */

/** The Temporal schedule's id, and the prefix of the workflow ids it starts. */
export const RETENTION_SCHEDULE_ID = 'retention-sweep';

/** A schedule as Temporal takes it: a cron expression or a fixed interval. */
export type RetentionScheduleSpec = { cronExpressions: [string] } | { intervals: [{ every: `${number}s` }] };

const INTERVAL = /^(\d+)\s*(s|m|h|d)$/;
const CRON_FIELD = /^[\d*/,-]+$|^[A-Za-z]{3}$/;

/**
 * Reads `APP_RETENTION__SCHEDULE`: an interval (`24h`, `30m`, `7d`, at least a minute) or a
 * five-field cron expression (`0 3 * * *`), or Temporal's `@daily`-style names. Anything else is
 * refused by name, so a typo fails the worker's start instead of never sweeping.
 */
export function retentionScheduleSpec(schedule: string): RetentionScheduleSpec {
  const s = schedule.trim();
  const interval = INTERVAL.exec(s);
  if (interval) {
    const seconds =
      Number(interval[1]) * { s: 1, m: 60, h: 3600, d: 86400 }[interval[2] as 's' | 'm' | 'h' | 'd'];
    if (seconds < 60)
      throw new Error(`retention.schedule ${schedule}: an interval must be at least a minute`);
    return { intervals: [{ every: `${seconds}s` as const }] };
  }
  if (/^@(yearly|annually|monthly|weekly|daily|hourly)$/.test(s)) return { cronExpressions: [s] };
  const fields = s.split(/\s+/);
  if (fields.length === 5 && fields.every((f) => CRON_FIELD.test(f))) return { cronExpressions: [s] };
  throw new Error(
    `retention.schedule ${JSON.stringify(schedule)} is neither an interval (e.g. 24h) nor a five-field cron expression (e.g. 0 3 * * *)`,
  );
}

/** What the sweep knows of a session past its retention. */
export interface DueSession {
  id: string;
  name: string;
  retentionUntil: Date;
  /** Work that must end before the session can be erased (an ingest, an auto-label), by name. */
  busy: string | null;
  /** An erasure of it already running. */
  erasing: boolean;
}

/** Why a sweep passes over a session another erasure is already erasing. */
export const ALREADY_ERASING = 'an erasure of it is already running';

export interface SweepPlan {
  erase: string[];
  skip: Array<{ session_id: string; reason: string }>;
}

/**
 * Which due sessions a sweep erases: every one not busy and not already being erased, oldest
 * retention first; at most `limit` (the rest wait for the next sweep, which finds them still due).
 */
export function planSweep(due: readonly DueSession[], limit: number): SweepPlan {
  const ordered = [...due].sort((a, b) => a.retentionUntil.getTime() - b.retentionUntil.getTime());
  const plan: SweepPlan = { erase: [], skip: [] };
  for (const s of ordered) {
    if (s.erasing) plan.skip.push({ session_id: s.id, reason: ALREADY_ERASING });
    else if (s.busy) plan.skip.push({ session_id: s.id, reason: s.busy });
    else if (plan.erase.length >= limit)
      plan.skip.push({
        session_id: s.id,
        reason: `over this sweep's limit of ${limit}; the next sweep takes it`,
      });
    else plan.erase.push(s.id);
  }
  return plan;
}

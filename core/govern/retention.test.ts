import { loadConfig } from '../config';
import { planSweep, retentionScheduleSpec, type DueSession } from './retention';

describe('retention schedule', () => {
  it('reads intervals, cron expressions and named schedules, refusing anything else by name', () => {
    expect(retentionScheduleSpec('24h')).toEqual({ intervals: [{ every: '86400s' }] });
    expect(retentionScheduleSpec(' 30m ')).toEqual({ intervals: [{ every: '1800s' }] });
    expect(retentionScheduleSpec('7d')).toEqual({ intervals: [{ every: '604800s' }] });
    expect(retentionScheduleSpec('0 3 * * *')).toEqual({ cronExpressions: ['0 3 * * *'] });
    expect(retentionScheduleSpec('*/15 2-4 * * MON')).toEqual({ cronExpressions: ['*/15 2-4 * * MON'] });
    expect(retentionScheduleSpec('@daily')).toEqual({ cronExpressions: ['@daily'] });
    expect(() => retentionScheduleSpec('30s')).toThrow(/at least a minute/);
    expect(() => retentionScheduleSpec('every day')).toThrow(/neither an interval/);
    expect(() => retentionScheduleSpec('0 3 * *')).toThrow(/neither an interval/);
    expect(() => loadConfig({ APP_ENV: 'test', APP_RETENTION__SCHEDULE: 'daily-ish' })).toThrow(/retention/);
    expect(loadConfig({ APP_ENV: 'test' }).retention).toEqual({
      enabled: true,
      schedule: '0 3 * * *',
      sweepLimit: 100,
    });
  });
});

describe('planSweep', () => {
  const due = (id: string, day: number, extra: Partial<DueSession> = {}): DueSession => ({
    id,
    name: id,
    retentionUntil: new Date(Date.UTC(2026, 0, day)),
    busy: null,
    erasing: false,
    ...extra,
  });

  it('erases the oldest retention first up to the limit, and says why it skips the others', () => {
    const plan = planSweep(
      [
        due('c', 3),
        due('a', 1),
        due('busy', 2, { busy: 'session busy is being ingested' }),
        due('erasing', 2, { erasing: true }),
        due('b', 2),
        due('d', 4),
      ],
      3,
    );
    expect(plan.erase).toEqual(['a', 'b', 'c']);
    expect(plan.skip).toEqual([
      { session_id: 'busy', reason: 'session busy is being ingested' },
      { session_id: 'erasing', reason: 'an erasure of it is already running' },
      { session_id: 'd', reason: "over this sweep's limit of 3; the next sweep takes it" },
    ]);
    expect(planSweep([], 10)).toEqual({ erase: [], skip: [] });
  });
});

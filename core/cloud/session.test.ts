import { Instance, Job } from './contract';
import {
  accruedCostUsd,
  CloudSessionStateError,
  findOrphans,
  isOpen,
  nextState,
  priceRefusal,
  sessionEndsAt,
  uptimeSeconds,
} from './session';

const at = (iso: string) => new Date(iso);
const instance = (o: Partial<Instance> & Pick<Instance, 'id'>): Instance => ({
  status: 'running',
  hourly_usd: 2,
  tags: {},
  created_at: '2026-01-01T00:00:00Z',
  ...o,
});

describe('cloud session state machine', () => {
  it('moves open sessions on their events and ends them', () => {
    expect(nextState('connecting', 'instance_running')).toBe('active');
    expect(nextState('connecting', 'boot_failed')).toBe('failed');
    expect(nextState('active', 'disconnect')).toBe('disconnected');
    expect(nextState('active', 'expire')).toBe('disconnected');
    expect(nextState('active', 'instance_lost')).toBe('orphaned');
    expect(isOpen('connecting') && isOpen('active')).toBe(true);
    for (const ended of ['disconnected', 'orphaned', 'terminated', 'failed'])
      expect(isOpen(ended)).toBe(false);
  });

  it('refuses an event an ended or active session cannot take', () => {
    expect(() => nextState('disconnected', 'disconnect')).toThrow(CloudSessionStateError);
    expect(() => nextState('active', 'boot_failed')).toThrow(
      'a cloud session that is active cannot take boot_failed',
    );
    expect(() => nextState('nonsense', 'expire')).toThrow(CloudSessionStateError);
  });
});

describe('cost and time', () => {
  it('prorates the hourly price to the elapsed time', () => {
    expect(accruedCostUsd(3.6, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:01Z'))).toBe(0.001);
    expect(accruedCostUsd(2.5, at('2026-01-01T00:00:00Z'), at('2026-01-01T01:30:00Z'))).toBe(3.75);
    // A short session is not free (no rounding to cents), and a skewed clock never makes a refund.
    expect(accruedCostUsd(1, at('2026-01-01T00:00:00Z'), at('2026-01-01T00:00:00.500Z'))).toBeGreaterThan(0);
    expect(accruedCostUsd(1, at('2026-01-01T00:00:01Z'), at('2026-01-01T00:00:00Z'))).toBe(0);
  });

  it('counts uptime in whole seconds and ends a session after its maximum hours', () => {
    expect(uptimeSeconds(at('2026-01-01T00:00:00Z'), at('2026-01-01T00:01:01.900Z'))).toBe(61);
    expect(sessionEndsAt(at('2026-01-01T00:00:00Z'), 12).toISOString()).toBe('2026-01-01T12:00:00.000Z');
    expect(sessionEndsAt(at('2026-01-01T00:00:00Z'), 0.5).toISOString()).toBe('2026-01-01T00:30:00.000Z');
  });

  it('refuses an acknowledgement under the quote, naming both figures', () => {
    expect(priceRefusal(2.5, 2.5, 'H100')).toBeNull();
    expect(priceRefusal(3, 2.5, 'H100')).toBeNull();
    const refusal = priceRefusal(2.49, 2.5, 'H100 80GB');
    expect(refusal).toContain('2.5 USD per hour for H100 80GB');
    expect(refusal).toContain('acknowledged 2.49');
  });
});

describe('orphans', () => {
  const now = at('2026-01-01T01:00:00Z');
  const owner = 'drivelab';
  const open = [
    { id: 's-known-by-id', instanceId: 'i-1', createdAt: at('2026-01-01T00:00:00Z') },
    { id: 's-known-by-tag', instanceId: null, createdAt: at('2026-01-01T00:00:00Z') },
    { id: 's-lost', instanceId: 'i-gone', createdAt: at('2026-01-01T00:00:00Z') },
    { id: 's-lost-listed', instanceId: 'i-ended', createdAt: at('2026-01-01T00:00:00Z') },
    { id: 's-in-flight', instanceId: null, createdAt: at('2026-01-01T00:59:50Z') },
  ];
  const instances = [
    instance({ id: 'i-1', tags: { owner } }),
    instance({ id: 'i-2', status: 'starting', tags: { owner, session_id: 's-known-by-tag' } }),
    instance({ id: 'i-stray', tags: { owner, session_id: 's-ended-long-ago' } }),
    instance({ id: 'i-stray-stopping', status: 'stopping', tags: { owner } }),
    instance({ id: 'i-foreign', tags: { owner: 'someone-else' } }),
    instance({ id: 'i-untagged' }),
    instance({ id: 'i-ended', status: 'terminated', tags: { owner }, ended_at: '2026-01-01T00:30:00Z' }),
    instance({ id: 'i-old', status: 'failed', tags: { owner } }),
  ];

  it('finds our live instances no open session knows, and open sessions whose instance is gone', () => {
    const report = findOrphans({ owner, instances, open, now, graceSeconds: 30 });
    expect(report.untracked.map((i) => i.id)).toEqual(['i-stray', 'i-stray-stopping']);
    expect(report.lost.map((l) => [l.session.id, l.instance?.id ?? null])).toEqual([
      ['s-lost', null],
      ['s-lost-listed', 'i-ended'],
    ]);
  });

  it('finds nothing once the stray instances are terminated and the lost rows closed', () => {
    const after = instances.map((i) =>
      i.id.startsWith('i-stray') ? { ...i, status: 'terminated' as const } : i,
    );
    const stillOpen = open.filter((s) => !s.id.startsWith('s-lost'));
    expect(findOrphans({ owner, instances: after, open: stillOpen, now, graceSeconds: 30 })).toEqual({
      untracked: [],
      lost: [],
    });
  });
});

describe('provider contract', () => {
  it('parses a finished job and refuses a result without a proper SHA-256', () => {
    const job = Job.parse({
      id: 'j-1',
      status: 'succeeded',
      result: { model_url: '/v1/jobs/j-1/model', sha256: 'a'.repeat(64), size_bytes: 10 },
    });
    expect(job.result?.metrics).toEqual({});
    expect(job.progress).toEqual({});
    expect(
      Job.safeParse({
        id: 'j-1',
        status: 'succeeded',
        result: { model_url: 'x', sha256: 'nope', size_bytes: 10 },
      }).success,
    ).toBe(false);
    expect(
      Instance.safeParse({ id: 'i', status: 'sleeping', hourly_usd: 1, created_at: 'now' }).success,
    ).toBe(false);
  });
});

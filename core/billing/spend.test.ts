import { effectiveSpend, nextPeriod, periodStart, totalsOf, usageByPeriod, type SpendRow } from './spend';

const row = (over: Partial<SpendRow>): SpendRow => ({
  id: 'r',
  kind: 'training',
  subject_type: 'training_job',
  subject_id: 'job-1',
  basis: 'estimate',
  gpu_hours: 1,
  hourly_usd: 2,
  usd: 2,
  at: new Date('2024-05-15T10:00:00Z'),
  parent_id: null,
  ...over,
});

describe('effectiveSpend', () => {
  it('counts the actual instead of the estimate of the same subject', () => {
    const est = row({ id: 'e' });
    const act = row({ id: 'a', basis: 'actual', usd: 0.5 });
    expect(effectiveSpend([est, act]).map((r) => r.id)).toEqual(['a']);
    expect(effectiveSpend([est]).map((r) => r.id)).toEqual(['e']);
  });

  it('keeps an estimate whose only actual belongs to another kind or subject', () => {
    const rows = [row({ id: 'e' }), row({ id: 'a', basis: 'actual', kind: 'cloud' })];
    expect(effectiveSpend(rows)).toHaveLength(2);
  });

  it("drops a whole's estimate once a part has its actual", () => {
    const sweep = row({ id: 's', subject_type: 'training_sweep', subject_id: 'sweep-1' });
    const part = row({ id: 'p', basis: 'actual', subject_id: 'job-9', parent_id: 'sweep-1' });
    expect(effectiveSpend([sweep, part]).map((r) => r.id)).toEqual(['p']);
  });
});

describe('periods', () => {
  const at = new Date('2024-05-15T10:00:00Z'); // a Wednesday
  it('starts days at UTC midnight, weeks on Monday, months on the 1st', () => {
    expect(periodStart(at, 'day').toISOString()).toBe('2024-05-15T00:00:00.000Z');
    expect(periodStart(at, 'week').toISOString()).toBe('2024-05-13T00:00:00.000Z');
    expect(periodStart(new Date('2024-05-19T23:59:59Z'), 'week').toISOString()).toBe(
      '2024-05-13T00:00:00.000Z',
    );
    expect(periodStart(at, 'month').toISOString()).toBe('2024-05-01T00:00:00.000Z');
    expect(nextPeriod(new Date('2024-12-01T00:00:00Z'), 'month').toISOString()).toBe(
      '2025-01-01T00:00:00.000Z',
    );
  });

  it('sums effective spend per period and per kind, listing empty periods', () => {
    const rows = [
      row({ id: '1', usd: 1.25, gpu_hours: 0.5 }),
      row({
        id: '2',
        kind: 'cloud',
        subject_id: 'c',
        basis: 'actual',
        usd: 3,
        at: new Date('2024-05-16T01:00:00Z'),
      }),
      row({ id: '3', subject_id: 'job-2', usd: 10, at: new Date('2024-05-20T00:00:00Z') }),
    ];
    const days = usageByPeriod(
      rows,
      'day',
      new Date('2024-05-15T00:00:00Z'),
      new Date('2024-05-18T00:00:00Z'),
    );
    expect(days.map((d) => d.usd)).toEqual([1.25, 3, 0]);
    expect(days[1]?.by_kind).toEqual({ cloud: { usd: 3, gpu_hours: 1, records: 1 } });
    const weeks = usageByPeriod(
      rows,
      'week',
      new Date('2024-05-13T00:00:00Z'),
      new Date('2024-05-27T00:00:00Z'),
    );
    expect(weeks.map((w) => w.usd)).toEqual([4.25, 10]);
  });

  it('totals to a millionth of a dollar', () => {
    const t = totalsOf([row({ usd: 0.1 }), row({ usd: 0.2 })]);
    expect(t.usd).toBe(0.3);
    expect(t.by_kind.training).toEqual({ usd: 0.3, gpu_hours: 2, records: 2 });
  });
});

import { slotEfficiency, type SlotSpan } from './efficiency';

const at = (h: number, m = 0) => new Date(Date.UTC(2026, 11, 1, h, m));
const period = { from: at(0), to: at(10), now: at(12) };
const opts = { minGapSeconds: 60, topGaps: 10 };

describe('slotEfficiency', () => {
  it('unions the spans within the period and lists the idle gaps, longest first', () => {
    const spans: SlotSpan[] = [
      { kind: 'autolabel', id: 'a', start: at(1), end: at(2) },
      { kind: 'training', id: 't', start: at(4), end: at(7) },
      // Before the period: only its part inside counts.
      { kind: 'inference', id: 'i', start: at(-1), end: at(0, 30) },
    ];
    const e = slotEfficiency(spans, period, opts);
    expect(e).toMatchObject({
      period_seconds: 36_000,
      busy_seconds: 4.5 * 3600,
      idle_seconds: 5.5 * 3600,
      overlap_seconds: 0,
      idle_gaps_counted: 3,
      by_kind: {
        autolabel: { jobs: 1, busy_seconds: 3600 },
        training: { jobs: 1, busy_seconds: 3 * 3600 },
        inference: { jobs: 1, busy_seconds: 1800 },
      },
    });
    expect(e.utilisation).toBeCloseTo(0.45, 12);
    expect(e.idle_gaps.map((g) => [g.from, g.seconds])).toEqual([
      [at(7).toISOString(), 3 * 3600],
      [at(2).toISOString(), 2 * 3600],
      [at(0, 30).toISOString(), 1800],
    ]);
  });

  it('counts a running span up to now, reports overlaps, and keeps gaps from the minimum length', () => {
    const e = slotEfficiency(
      [
        { kind: 'training', id: 'a', start: at(0), end: at(5) },
        { kind: 'autolabel', id: 'b', start: at(4), end: at(6) },
        { kind: 'autolabel', id: 'c', start: new Date(at(6).getTime() + 30_000), end: null },
      ],
      period,
      { minGapSeconds: 60, topGaps: 1 },
    );
    // 0–6 busy, a 30 s gap (under the minimum), then busy to the period's end.
    expect(e.busy_seconds).toBe(36_000 - 30);
    expect(e.overlap_seconds).toBe(3600);
    expect(e.idle_gaps).toEqual([]);
    expect(e.idle_gaps_counted).toBe(0);
  });

  it('reads an empty slot as one gap over the whole period', () => {
    const e = slotEfficiency([], period, opts);
    expect(e).toMatchObject({ busy_seconds: 0, utilisation: 0, idle_gaps_counted: 1 });
    expect(e.idle_gaps[0]).toEqual({ from: at(0).toISOString(), to: at(10).toISOString(), seconds: 36_000 });
  });
});

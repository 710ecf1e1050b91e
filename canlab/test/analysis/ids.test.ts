import { computeIdStats, formatIdsTable, formatRanges, IdStatsAccumulator } from '../../src/analysis/ids';
import { makeFrames } from '../detect/synthetic';

describe('per-id statistics', () => {
  const a = makeFrames(101, 4, (t, d) => {
    d[0] = t & 0xff; // counter in byte 0
    d[2] = t >= 50 ? 1 : 0; // one toggle of bit 16
  });
  const b = makeFrames(11, 2, () => undefined, 0x7ff);
  b.forEach((f, i) => (f.timestamp = i * 0.1 + (i % 2 ? 0.01 : 0)));

  it('counts, rates, jitter, moving bytes and bit flips', () => {
    const stats = computeIdStats([...a, ...b]);
    expect(stats.map((s) => s.key)).toEqual(['0x123', '0x7FF']);
    const s = stats[0]!;
    expect(s.count).toBe(101);
    expect(s.meanRateHz).toBeCloseTo(100, 6);
    expect(s.meanPeriodMs).toBeCloseTo(10, 6);
    expect(s.jitterMs).toBeCloseTo(0, 6);
    expect(s.dlcs).toEqual([4]);
    expect(s.movingBytes).toEqual([0, 2]);
    expect(s.bitFlips[0]).toBe(100);
    expect(s.bitFlips[1]).toBe(50);
    expect(s.bitFlips[16]).toBe(1);
    expect(s.movingBits).toContain(16);
    expect(s.byteDistinct[0]).toBe(101);
    const s2 = stats[1]!;
    expect(s2.movingBytes).toEqual([]);
    // gaps alternate 110 ms and 90 ms: std dev 10 ms
    expect(s2.jitterMs).toBeCloseTo(10, 6);
  });

  it('streams frame by frame and prints a table', () => {
    const acc = new IdStatsAccumulator();
    for (const f of a) acc.add(f);
    acc.add({ ...a[0]!, error: true });
    expect(acc.errorFrames).toBe(1);
    const text = formatIdsTable(acc.results());
    expect(text).toMatch(/^id\s+count\s+rate Hz/);
    expect(text).toContain('0x123');
    expect(text).toContain('bit flips (bit:count) 0:100 1:50');
    expect(formatRanges([0, 1, 2, 5, 7, 8])).toBe('0-2,5,7-8');
  });
});

import type { CanFrame } from '../../src/frame';
import { rankAgainstIntervals, twoProportionZ } from '../../src/mcp/rank';

function fr(timestamp: number, id: number, bytes: number[]): CanFrame {
  const data = Uint8Array.from(bytes);
  return {
    timestamp,
    id,
    extended: false,
    remote: false,
    error: false,
    fd: false,
    brs: false,
    esi: false,
    dlc: data.length,
    data,
    channel: 0,
  };
}

describe('ranking bytes against marked intervals', () => {
  it('computes the pooled two-proportion z-score', () => {
    // p_in = 0.5, p_out = 0.2, pooled p = 0.35: z = 0.3 / sqrt(0.35 * 0.65 * (1/100 + 1/100))
    expect(twoProportionZ(50, 100, 20, 100)).toBeCloseTo(0.3 / Math.sqrt(0.35 * 0.65 * 0.02), 10);
    expect(twoProportionZ(0, 100, 0, 100)).toBe(0);
    expect(twoProportionZ(100, 100, 100, 100)).toBe(0);
    expect(twoProportionZ(5, 10, 1, 0)).toBe(0);
  });

  it('puts the byte that changes only inside the interval first, and a flag held inside by its level', () => {
    const frames: CanFrame[] = [];
    for (let t = 0; t < 400; t++) {
      const time = t * 0.01;
      const inside = time >= 1 && time <= 2;
      frames.push(fr(time, 0x10, [t & 0x0f, inside ? (t * 7) & 0xff : 0, 0x55]));
      frames.push(fr(time + 0.005, 0x20, [inside ? 1 : 0, (t * 13) & 0xff]));
    }
    const r = rankAgainstIntervals(frames, [[1, 2]]);
    expect(r.bytes[0]).toMatchObject({ id: '0x010', byte: 1 });
    // Outside, only the exit edge (the first frame after the interval) changes it.
    expect(r.bytes[0]).toMatchObject({ pairsInside: 101, pairsOutside: 298, changeRateOutside: 1 / 298 });
    // The counter byte changes in every pair on both sides: no evidence.
    const counter = r.bytes.find((b) => b.id === '0x010' && b.byte === 0)!;
    expect(counter.changeZ).toBe(0);
    expect(counter.score).toBeLessThan(1);
    const flag = r.bits.find((b) => b.id === '0x020' && b.bit === 0)!;
    expect(flag.changeZ).toBeLessThan(3);
    expect(flag.levelZ).toBeGreaterThan(15);
    expect(flag.setRateInside).toBe(1);
    expect(r.bits.slice(0, 9).map((b) => `${b.id}/${b.bit}`)).toContain('0x020/0');
  });

  it('merges overlapping intervals and filters ids', () => {
    const frames = Array.from({ length: 100 }, (_, t) => fr(t, 0x1, [t >= 10 && t <= 30 ? t : 0]));
    const r = rankAgainstIntervals(
      frames,
      [
        [10, 20],
        [15, 30],
      ],
      { ids: new Set(['0x001']) },
    );
    expect(r.pairsInside).toBe(21);
    expect(r.pairsOutside).toBe(78);
    expect(rankAgainstIntervals(frames, [[10, 30]], { ids: new Set(['0x002']) }).bytes).toEqual([]);
  });
});

import type { CanFrame } from '../../src/frame';
import { prng } from '../../src/eval/generate';
import { findRepeats } from '../../src/mcp/repeats';

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

describe('repeated blocks', () => {
  it('finds the smallest period of a cycling id and reports static ids apart', () => {
    const frames = Array.from({ length: 120 }, (_, t) => fr(t * 0.1, 0x40, [[1, 2, 3, 2, 1, 9][t % 6]!]));
    frames.push(...Array.from({ length: 50 }, (_, t) => fr(t, 0x41, [7, 7])));
    const r = findRepeats(frames);
    expect(r.periodic).toEqual([
      expect.objectContaining({
        id: '0x040',
        period: 6,
        matchRate: 1,
        block: ['01', '02', '03', '02', '01', '09'],
      }),
    ]);
    expect(r.periodic[0]!.periodSeconds).toBeCloseTo(0.6, 9);
    expect(r.staticIds).toEqual(['0x041']);
  });

  it('tolerates a few broken periods up to the match threshold', () => {
    const frames = Array.from({ length: 200 }, (_, t) => fr(t, 0x40, [t === 50 || t === 120 ? 0xff : t % 4]));
    expect(findRepeats(frames).periodic[0]).toMatchObject({ period: 4 });
    expect(findRepeats(frames, { minPeriodicMatch: 1 }).periodic).toEqual([]);
  });

  it('finds a replayed block as one maximal repeat, not as its tails', () => {
    const rand = prng(11);
    const block = [[0xa0], [0xa1], [0xa2], [0xa3]];
    const frames: CanFrame[] = [];
    for (let t = 0; t < 150; t++) {
      const k = [10, 60, 110].findIndex((s) => t >= s && t < s + block.length);
      frames.push(
        fr(
          t,
          0x50,
          k >= 0 ? block[t - [10, 60, 110][k]!]! : [Math.floor(rand() * 256), Math.floor(rand() * 256)],
        ),
      );
    }
    const r = findRepeats(frames);
    expect(r.periodic).toEqual([]);
    expect(r.blocks).toEqual([
      { id: '0x050', length: 4, occurrences: [10, 60, 110], block: ['A0', 'A1', 'A2', 'A3'] },
    ]);
  });
});

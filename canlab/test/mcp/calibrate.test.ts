import { writeField } from '../../src/analysis/bits';
import { CanlabInputError } from '../../src/errors';
import type { CanFrame } from '../../src/frame';
import { calibrate, parseReferenceCsv } from '../../src/mcp/calibrate';

function fr(timestamp: number, id: number, data: Uint8Array): CanFrame {
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

describe('calibration against a reference', () => {
  it('recovers a signed Motorola field with its scale and offset', () => {
    const frames: CanFrame[] = [];
    const truth = (t: number): number => Math.round(1900 * Math.sin(t / 3));
    for (let t = 0; t < 600; t++) {
      const d = new Uint8Array(8);
      d[0] = t & 0xff; // a counter beside it
      writeField(d, { startBit: 15, length: 12, byteOrder: 'big_endian' }, truth(t * 0.05) & 0xfff);
      frames.push(fr(t * 0.05, 0x321, d));
    }
    // Reference: -0.25 * raw + 30, sampled a little after each frame.
    const reference = Array.from({ length: 100 }, (_, k) => ({
      timestamp: k * 0.3 + 0.01,
      value: -0.25 * truth(Math.floor((k * 0.3 + 0.01) / 0.05) * 0.05) + 30,
    }));
    const [best] = calibrate(frames, reference);
    expect(best).toMatchObject({
      id: '0x321',
      field: { startBit: 15, length: 12, byteOrder: 'big_endian' },
      signed: true,
    });
    expect(best!.scale).toBeCloseTo(-0.25, 9);
    expect(best!.offset).toBeCloseTo(30, 6);
    expect(best!.r2).toBeGreaterThan(0.999999);
    expect(best!.rmse).toBeLessThan(1e-6);
  });

  it('pairs samples only with frames within maxGapS and applies the time offset', () => {
    const frames = Array.from({ length: 50 }, (_, t) => fr(100 + t, 0x1, Uint8Array.of(t * 3)));
    const reference = Array.from({ length: 50 }, (_, t) => ({ timestamp: t + 0.5, value: 2 * t * 3 + 1 }));
    expect(calibrate(frames, reference)).toEqual([]);
    const [best] = calibrate(frames, reference, { timeOffsetS: 100 });
    expect(best!.scale).toBeCloseTo(2, 9);
    expect(best!.offset).toBeCloseTo(1, 9);
  });

  it('parses timestamp,value CSV with a header and names the bad line', () => {
    expect(parseReferenceCsv('t,v\n0,1\n1;2\n2\t3\n', 'r.csv')).toEqual([
      { timestamp: 0, value: 1 },
      { timestamp: 1, value: 2 },
      { timestamp: 2, value: 3 },
    ]);
    expect(() => parseReferenceCsv('t,v\n0,1\n1,x\n', 'r.csv')).toThrow(
      new CanlabInputError('r.csv:3', 'expected "timestamp,value" with two numbers, got "1,x"'),
    );
    expect(() => parseReferenceCsv('0,1\n', 'r.csv')).toThrow(/at least 3 samples/);
  });
});

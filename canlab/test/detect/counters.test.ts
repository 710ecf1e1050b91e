import { messageFrames } from '../../src/detect/frames';
import { detectCounters } from '../../src/detect/counters';
import { field, makeFrames, prng, writeField } from './synthetic';

function counters(frames: ReturnType<typeof makeFrames>) {
  return detectCounters(messageFrames(frames));
}

describe('counter detector', () => {
  const rand = prng(7);
  it('finds a 4-bit nibble counter with wrap-around next to noise', () => {
    const c = counters(
      makeFrames(300, 8, (t, d) => {
        writeField(d, field(12, 4), (t + 5) % 16);
        d[0] = Math.floor(rand() * 256);
        writeField(d, field(8, 4), Math.floor(rand() * 16));
      }),
    );
    expect(c).toHaveLength(1);
    expect(c[0]!.field).toEqual(field(12, 4));
    expect(c[0]!.step).toBe(1);
    expect(c[0]!.modulus).toBe(16);
    expect(c[0]!.evidence.join(' ')).toMatch(/wrap-arounds/);
  });

  it('finds an 8-bit byte counter and a 2-bit counter in a non-aligned position', () => {
    const c = counters(
      makeFrames(600, 8, (t, d) => {
        d[3] = t & 0xff;
        writeField(d, field(41, 2), t % 4);
      }),
    );
    const fields = c.map((x) => x.field).sort((a, b) => a.startBit - b.startBit);
    expect(fields).toEqual([field(24, 8), field(41, 2)]);
  });

  it('reports a +2 counter in upper bits with its aligned reading', () => {
    const c = counters(
      makeFrames(200, 2, (t, d) => {
        d[1] = (t * 2) & 0xff; // bit 8 constant: counts +2 read as a byte
      }),
    );
    expect(c).toHaveLength(1);
    expect(c[0]!.field).toEqual(field(9, 7));
    expect(c[0]!.aligned).toEqual({ field: field(8, 8), step: 2 });
  });

  it('reports a +4 counter in the upper nibble of a byte', () => {
    const c = counters(
      makeFrames(200, 1, (t, d) => {
        d[0] = (((t * 4) & 0xf) << 4) | 0x3; // low nibble constant 3, counter steps 4 within the high nibble
      }),
    );
    expect(c[0]!.field).toEqual(field(6, 2));
    expect(c[0]!.aligned).toEqual({ field: field(4, 4), step: 4 });
  });

  it('finds a 12-bit Motorola counter across bytes, and a counter with an odd step', () => {
    const c = counters(
      makeFrames(5000, 8, (t, d) => {
        writeField(d, field(7, 12, 'big_endian'), t % 4096);
        writeField(d, field(32, 4), (3 * t) % 16);
      }),
    );
    const moto = c.find((x) => x.field.byteOrder === 'big_endian');
    expect(moto?.field).toEqual(field(7, 12, 'big_endian'));
    const odd = c.find((x) => x.field.startBit === 32);
    expect(odd?.step).toBe(3);
  });

  it('finds a counter wrapping below 2^n (0..14) and tolerates a lost frame', () => {
    const frames = makeFrames(300, 2, (t, d) => writeField(d, field(0, 4), t % 15));
    frames.splice(100, 1);
    const c = counters(frames);
    expect(c[0]!.field).toEqual(field(0, 4));
    expect(c[0]!.modulus).toBe(15);
    expect(c[0]!.matchRate).toBeGreaterThan(0.99);
  });

  it('does not call a slow ramp or noise a counter', () => {
    const c = counters(
      makeFrames(500, 4, (t, d) => {
        d[0] = Math.floor(t / 3) & 0xff;
        d[1] = Math.floor(rand() * 256);
      }),
    );
    expect(c).toEqual([]);
  });
});

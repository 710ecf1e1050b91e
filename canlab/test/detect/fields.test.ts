import { detectAll, detectMessage } from '../../src/detect';
import { messageFrames } from '../../src/detect/frames';
import { judgeSignedness, segmentFields } from '../../src/detect/boundaries';
import { field, makeFrames, prng, writeField } from './synthetic';

const rand = prng(5);
const noise = (): number => (rand() - 0.5) * 2;

describe('signal boundaries (READ-style flip rates, description length)', () => {
  it('separates adjacent Intel fields and reads a signed one as two’s complement', () => {
    const frames = makeFrames(1000, 8, (t, d) => {
      writeField(d, field(0, 12), Math.round(1800 + 1700 * Math.sin(t / 40) + 3 * noise())); // unsigned 12 bit
      writeField(d, field(12, 10), Math.round(400 * Math.sin(t / 25 + 1) + 2 * noise())); // signed 10 bit around zero
      writeField(d, field(24, 1), Math.floor(t / 97) % 2); // flag
      writeField(d, field(32, 16), Math.round(30000 + 25000 * ((t % 500) / 500) ** 1.5)); // accelerating ramp
    });
    const f = detectMessage(messageFrames(frames));
    expect(f.byteOrder).toBe('little_endian');
    const fields = f.fields.map((x) => [x.field.startBit, x.field.length, x.signed]);
    expect(fields).toEqual(
      expect.arrayContaining([
        [0, 12, false],
        [12, 10, true],
        [32, 16, false],
      ]),
    );
    expect(f.flags.map((x) => x.field)).toEqual([field(24, 1)]);
    for (const x of f.fields) {
      expect(x.confidence).toBeGreaterThanOrEqual(0);
      expect(x.confidence).toBeLessThanOrEqual(1);
      expect(x.evidence.length).toBeGreaterThan(0);
    }
  });

  it('detects Motorola fields across bytes and their byte order', () => {
    const frames = makeFrames(1000, 8, (t, d) => {
      writeField(d, field(7, 14, 'big_endian'), Math.round(8000 + 7000 * Math.sin(t / 50) + 4 * noise()));
      writeField(d, field(21, 12, 'big_endian'), Math.round(-1500 * Math.sin(t / 33) + 2 * noise()) & 0xfff);
      writeField(d, field(55, 16, 'big_endian'), (t * 37) % 65536);
    });
    const f = detectMessage(messageFrames(frames));
    expect(f.byteOrder).toBe('big_endian');
    const fields = f.fields.map((x) => [x.field.startBit, x.field.length, x.field.byteOrder, x.signed]);
    expect(fields).toEqual(
      expect.arrayContaining([
        [7, 14, 'big_endian', false],
        [21, 12, 'big_endian', true],
      ]),
    );
    const multi = f.fields.find((x) => x.field.startBit === 7)!;
    expect(multi.byteOrderConfidence).toBeGreaterThan(0.5);
  });

  it('segments in both orders and prefers the one that codes the frames shorter', () => {
    const frames = makeFrames(600, 2, (t, d) =>
      writeField(d, field(4, 8), Math.round(128 + 100 * Math.sin(t / 20))),
    );
    const msg = messageFrames(frames);
    const all = new Set(Array.from({ length: 16 }, (_, i) => i));
    const [best, other] = segmentFields(msg.data, msg.length, all);
    expect(best!.byteOrder).toBe('little_endian');
    expect(best!.cost).toBeLessThan(other!.cost);
  });

  it('judges signedness from how smoothly values read', () => {
    const around0 = Array.from({ length: 200 }, (_, t) => Math.round(50 * Math.sin(t / 10)) & 0xff);
    expect(judgeSignedness(around0, 8).signed).toBe(true);
    const ramp = Array.from({ length: 200 }, (_, t) => t);
    expect(judgeSignedness(ramp, 8).signed).toBe(false);
    const enumeration = Array.from({ length: 200 }, (_, t) => (t % 50 < 25 ? 0 : 3));
    expect(judgeSignedness(enumeration, 2).signed).toBe(false);
  });
});

describe('flags, value tables and multiplexers', () => {
  it('reports rarely toggling single bits as flags and few-valued fields as value tables', () => {
    const frames = makeFrames(800, 4, (t, d) => {
      writeField(d, field(3, 1), Math.floor(t / 150) % 2);
      writeField(d, field(5, 1), Math.floor(t / 61) % 2);
      writeField(d, field(8, 3), [1, 2, 6][Math.floor(t / 90) % 3]!);
    });
    const f = detectMessage(messageFrames(frames));
    expect(f.flags.map((x) => x.field.startBit).sort()).toEqual([3, 5]);
    const table = f.valueTables.find((v) => v.field.startBit === 8);
    expect(table?.field).toEqual(field(8, 3));
    expect(table?.values.map((v) => v.value)).toEqual([1, 2, 6]);
  });

  it('finds a round-robin multiplexer and segments each page', () => {
    const frames = makeFrames(900, 8, (t, d) => {
      const page = t % 3;
      writeField(d, field(0, 2), page);
      writeField(d, field(56, 4), t % 16); // counter outside the mux
      if (page === 0) writeField(d, field(8, 16), Math.round(30000 + 25000 * Math.sin(t / 60)));
      if (page === 1) writeField(d, field(8, 8), Math.round(120 + 100 * Math.sin(t / 45)));
      if (page === 1) writeField(d, field(16, 12), Math.round(2000 + 1800 * Math.cos(t / 70)));
      if (page === 2) writeField(d, field(30, 10), Math.round(500 + 450 * Math.sin(t / 30)));
    });
    const f = detectMessage(messageFrames(frames));
    expect(f.multiplexers).toHaveLength(1);
    expect(f.multiplexers[0]!.field).toEqual(field(0, 2));
    expect(f.multiplexers[0]!.groups.map((g) => g.value)).toEqual([0, 1, 2]);
    expect(f.counters.map((c) => c.field)).toEqual([field(56, 4)]);
    const pages = f.fields.map((x) => [x.multiplexerValue, x.field.startBit, x.field.length]);
    expect(pages).toEqual(
      expect.arrayContaining([
        [0, 8, 16],
        [1, 8, 8],
        [1, 16, 12],
        [2, 30, 10],
      ]),
    );
  });

  it('does not call a noisy data field a multiplexer', () => {
    const frames = makeFrames(1000, 8, (t, d) => {
      writeField(d, field(0, 12), Math.round(2000 + 1900 * Math.sin(t / 37) + 20 * noise()));
      writeField(d, field(16, 1), Math.floor(t / 130) % 2);
      writeField(d, field(24, 8), Math.round(128 + 120 * Math.sin(t / 90)));
    });
    expect(detectAll(frames).ids[0]!.multiplexers).toEqual([]);
  });
});

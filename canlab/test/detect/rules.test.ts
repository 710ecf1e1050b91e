import { carryEvidence, carriesLink, extendsSign, opposedChanges } from '../../src/detect/carries';
import { detectAll, detectMessage } from '../../src/detect';
import { judgeSignedness } from '../../src/detect/boundaries';
import { detectChecksums } from '../../src/detect/checksums';
import { buildDraftMessage } from '../../src/detect/draft';
import { judgeValueTable } from '../../src/detect/flags';
import { messageFrames } from '../../src/detect/frames';
import { readField } from '../../src/analysis/bits';
import { field, makeFrames, pagesWithRareValue, prng, toyotaChecksum, writeField } from './synthetic';

/**
 * The rules the detectors follow on real traffic (docs/detectors.md), each on a small frame set
 * built to show it: what the rule must find, and what it must not.
 */

const BE = 'big_endian';

/** A ramp up and down by 21 per frame between 300 and 3450: its LSB alternates in every frame. */
const triangle = (t: number): number => 300 + 21 * (t % 300 < 150 ? t % 150 : 150 - (t % 150));

/**
 * A radar-like track value: ramps at a slope that changes per segment, jumps to a new target between
 * segments, and now and then holds a marker value. What a 60 s radar capture shows.
 */
function trackValues(n: number, seed: number, lo: number, hi: number, marker?: number): number[] {
  const rand = prng(seed);
  const out: number[] = [];
  let v = lo + rand() * (hi - lo);
  let slope = 0;
  let left = 0;
  let held = 0;
  for (let t = 0; t < n; t++) {
    if (left-- <= 0) {
      v = lo + rand() * (hi - lo);
      slope = (rand() - 0.5) * 40;
      left = 40 + Math.floor(rand() * 120);
      held = marker !== undefined && rand() < 0.2 ? 10 + Math.floor(rand() * 20) : 0;
    }
    v = Math.min(hi, Math.max(lo, v + slope + (rand() - 0.5) * 4));
    out.push(held-- > 0 && marker !== undefined ? marker : Math.round(v));
  }
  return out;
}

describe('carry evidence: which neighbouring fields are one number', () => {
  it('links the two bytes of a smoothly moving value and not two independent fields that jump together', () => {
    const rand = prng(3);
    const distance = trackValues(1200, 5, 500, 9000);
    const frames = makeFrames(1200, 4, (t, d) => {
      writeField(d, field(7, 15, BE), distance[t]!);
      // An unrelated byte that changes in the same frames as the distance jumps.
      writeField(
        d,
        field(24, 8, 'little_endian'),
        t > 0 && distance[t]! - distance[t - 1]! > 60 ? Math.floor(rand() * 256) : 0,
      );
    });
    const data = messageFrames(frames).data;
    // Upper 5 bits over the lower 10, split where a description-length cut can fall.
    const linked = carryEvidence(data, field(7, 5, BE), field(2, 10, BE));
    expect(linked.carries).toBeGreaterThan(5 * linked.expected);
    expect(carriesLink(linked)).toBe(true);
    const apart = carryEvidence(data, field(7, 4, BE), field(24, 8));
    expect(carriesLink(apart)).toBe(false);
  });

  it('treats the top bits of a small two’s-complement value as its sign extension', () => {
    const values = trackValues(1000, 9, -200, 200);
    const data = messageFrames(
      makeFrames(1000, 2, (t, d) => writeField(d, field(0, 11), values[t]! & 0x7ff)),
    ).data;
    expect(extendsSign(data, field(9, 2), field(0, 9))).toBe(true);
    // A flag above a value that happens to be set now and then is no sign.
    const flagged = messageFrames(
      makeFrames(1000, 2, (t, d) => {
        writeField(d, field(0, 9), values[t]! & 0x1ff);
        writeField(d, field(9, 1), Math.floor(t / 97) % 2);
      }),
    ).data;
    expect(extendsSign(flagged, field(9, 1), field(0, 9))).toBe(false);
  });

  it('sees a fast ramp’s LSB change against the bits above it', () => {
    const ramp = makeFrames(600, 2, (t, d) => writeField(d, field(0, 12), triangle(t))).map((f) => f.data);
    expect(opposedChanges(ramp, field(1, 3), field(0, 1))).toBeGreaterThan(20);
    const rand = prng(11);
    const apart = makeFrames(600, 2, (t, d) => {
      writeField(d, field(0, 1), t % 2);
      writeField(d, field(1, 7), Math.floor(rand() * 128));
    }).map((f) => f.data);
    expect(opposedChanges(apart, field(1, 3), field(0, 1))).toBeLessThan(20);
  });
});

describe('boundaries on real-like traffic', () => {
  it('keeps a 15-bit Motorola distance whole across its byte boundary, with the marker it holds when no target is seen', () => {
    const distance = trackValues(1200, 21, 500, 9000, 0x7ffc);
    const f = detectAll(makeFrames(1200, 3, (t, d) => writeField(d, field(7, 15, BE), distance[t]!))).ids[0]!;
    expect(f.fields.map((x) => x.field)).toEqual([field(7, 15, BE)]);
    // 0x7FFC read as two's complement is -4, reached only by jumps: a marker, not a negative value.
    expect(f.fields[0]!.signed).toBe(false);
  });

  it('keeps the noisy least significant bits with the value above them', () => {
    const rand = prng(4);
    const coarse = trackValues(1200, 8, 100, 3000);
    const f = detectAll(
      makeFrames(1200, 2, (t, d) => writeField(d, field(0, 14), coarse[t]! * 4 + Math.floor(rand() * 4))),
    ).ids[0]!;
    expect(f.fields.map((x) => x.field)).toEqual([field(0, 14)]);
  });

  it('keeps a small signed value whole although its top bits move only with the sign', () => {
    const lateral = trackValues(1200, 13, -200, 200);
    const f = detectAll(makeFrames(1200, 2, (t, d) => writeField(d, field(0, 11), lateral[t]! & 0x7ff)))
      .ids[0]!;
    expect(f.fields.map((x) => [x.field, x.signed])).toEqual([[field(0, 11), true]]);
  });

  it('reads a value that jumps between targets on both sides of zero as signed; a range with a marker, or passing the middle of its range, as unsigned', () => {
    const lateral = judgeSignedness(
      trackValues(1200, 34, -900, 900).map((v) => v & 0xfff),
      12,
    );
    expect(lateral.signed).toBe(true);
    const distance = judgeSignedness(trackValues(1200, 33, 500, 9000, 0x7ffc), 15);
    expect(distance.signed).toBe(false);
    expect(distance.evidence).toMatch(/marker/);
    // A distance beyond 163.84 m passes 0x4000 in small steps: unsigned, whatever the markers.
    const far = judgeSignedness(trackValues(1200, 36, 14000, 19000, 0x7ffc), 15);
    expect(far.signed).toBe(false);
    expect(far.evidence).toMatch(/middle of its range/);
  });
});

describe('counters of width 1', () => {
  it('calls a bit that alternates in every frame a counter, not a flag', () => {
    const rand = prng(5);
    const f = detectAll(
      makeFrames(400, 4, (t, d) => {
        writeField(d, field(12, 1), t % 2);
        writeField(d, field(16, 12), Math.round(2000 + 1500 * Math.sin(t / 50) + rand() * 3));
      }),
    ).ids[0]!;
    expect(f.counters.map((c) => [c.field, c.step, c.modulus])).toEqual([[field(12, 1), 1, 2]]);
    expect(f.flags.some((x) => x.field.startBit === 12)).toBe(false);
  });

  it('leaves the alternating LSB of a ramp rising and falling 21 per frame in the ramp', () => {
    const f = detectAll(makeFrames(600, 2, (t, d) => writeField(d, field(0, 12), triangle(t)))).ids[0]!;
    expect(f.counters).toEqual([]);
    expect(f.fields.map((x) => x.field)).toEqual([field(0, 12)]);
  });
});

describe('checksums and counters that explain each other', () => {
  const toyota = (id: number, d: Uint8Array): number => toyotaChecksum(id, false, d);

  it('a message carrying only a counter and its checksum: checksum in the last byte, counter in the first', () => {
    const f = detectAll(
      makeFrames(
        600,
        8,
        (t, d) => {
          d[0] = t & 0xff;
          d[7] = toyota(0x21f, d);
        },
        0x21f,
      ),
    ).ids[0]!;
    expect(f.checksums.map((c) => [c.field.startBit, c.variant])).toEqual([
      [56, 'toyota (id bytes + length + data)'],
    ]);
    expect(f.counters.map((c) => c.field.startBit)).toEqual([0]);
  });

  it('when the sum also holds at the counter because the rest barely changes, keeps the position where it always holds', () => {
    const f = detectAll(
      makeFrames(
        600,
        8,
        (t, d) => {
          d[0] = t & 0xff;
          d[3] = t > 300 && t < 304 ? 9 : 0; // changes in 3 frames only
          d[7] = toyota(0x21e, d);
        },
        0x21e,
      ),
    ).ids[0]!;
    expect(f.checksums.map((c) => c.field.startBit)).toEqual([56]);
    expect(f.checksums[0]!.evidence.join(' ')).toMatch(/other bytes barely change/);
    expect(f.counters.map((c) => c.field.startBit)).toEqual([0]);
  });

  it('does not call a byte that is another byte plus an arbitrary constant a checksum', () => {
    const msg = messageFrames(
      makeFrames(300, 8, (t, d) => {
        d[2] = (t * 7) & 0xff;
        d[5] = (d[2]! + 0x5a) & 0xff;
      }),
    );
    expect(detectChecksums(msg)).toEqual([]);
  });

  it('claims no checksum on fewer than 8 distinct payloads, and finds it once there are enough', () => {
    const build = (distinct: number) =>
      detectAll(
        makeFrames(400, 8, (t, d) => {
          d[1] = (t % distinct) * 37;
          d[4] = ((t % distinct) * 11) & 0xff;
          d[7] = toyota(0x123, d);
        }),
      ).ids[0]!.checksums.map((c) => c.field.startBit);
    expect(build(4)).toEqual([]);
    expect(build(16)).toEqual([56]);
  });
});

describe('multiplexers', () => {
  it('does not take the bits of a smooth value for a selector, although the other fields freeze in some of its values', () => {
    // A radar track slot: a target is tracked (speed and distance move smoothly), then none is (speed
    // 0, distance at its marker, for a while). Speed's middle bits then split the frames into
    // "pages" in which the distance moves or holds: the cut a multiplexer search used to report.
    for (const seed of [1, 2, 3, 5, 7]) {
      const rand = prng(seed);
      const speed: number[] = [];
      const distance: number[] = [];
      while (speed.length < 400) {
        let s = (rand() - 0.5) * 400;
        const accel = (rand() - 0.5) * 12;
        let d = 1000 + rand() * 6000;
        for (let k = 20 + Math.floor(rand() * 40); k > 0; k--) {
          s += accel + (rand() - 0.5) * 6;
          d += s / 20;
          speed.push(Math.round(s));
          distance.push(Math.round(d));
        }
        for (let k = 10 + Math.floor(rand() * 50); k > 0; k--) {
          speed.push(0);
          distance.push(0x7ffc);
        }
      }
      const frames = makeFrames(speed.length, 8, (t, d) => {
        writeField(d, field(47, 12, BE), speed[t]! & 0xfff);
        writeField(d, field(15, 15, BE), distance[t]!);
      });
      for (const n of [100, 200, 400]) expect(detectAll(frames.slice(0, n)).ids[0]!.multiplexers).toEqual([]);
    }
  });

  it('does not call a cycling table a multiplexer: its "pages" are two fixed entries alternating, no moving content', () => {
    const table = [0x07f6, 0x0af9, 0x11cd, 0x224d, 0x1d20, 0x1664, 0x0599, 0x18d7, 0x2cdd, 0x14f1];
    const f = detectAll(
      makeFrames(400, 4, (t, d) => {
        writeField(d, field(0, 16), (10000 + 313 * t) & 0xffff);
        writeField(d, field(16, 16), table[t % table.length]!);
      }),
    ).ids[0]!;
    expect(f.multiplexers).toEqual([]);
  });

  it('gives every selector value the capture shows a page in the draft, rare ones included', () => {
    const frames = pagesWithRareValue();
    const idf = detectMessage(messageFrames(frames));
    expect(idf.multiplexers.map((m) => [m.field, m.rareValues.map((v) => v.value)])).toEqual([
      [field(0, 2), [3]],
    ]);
    const message = buildDraftMessage(idf);
    const pages = new Set(
      message.signals.flatMap((s) => (s.multiplexerValue === undefined ? [] : [s.multiplexerValue])),
    );
    const seen = new Set(frames.map((f) => readField(f.data, field(0, 2))));
    expect([...seen].every((v) => pages.has(v))).toBe(true);
    expect(message.signals.find((s) => s.multiplexerValue === 3)?.name).toBe('RAW_0x123_m3');
  });
});

describe('value tables', () => {
  it('does not call a value passing through a few readings an enumeration', () => {
    const frames = makeFrames(600, 2, (t, d) => writeField(d, field(0, 10), t < 10 ? 125 + 17 * t : 1020));
    expect(judgeValueTable(messageFrames(frames).data, field(0, 10))).toBeUndefined();
    const gear = makeFrames(600, 1, (t, d) =>
      writeField(d, field(0, 3), [0, 1, 3, 4][Math.floor(t / 70) % 4]!),
    );
    expect(judgeValueTable(messageFrames(gear).data, field(0, 3))?.values.map((v) => v.value)).toEqual([
      0, 1, 3, 4,
    ]);
  });
});

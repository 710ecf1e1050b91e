import { messageFrames } from '../../src/detect/frames';
import { detectChecksums } from '../../src/detect/checksums';
import { CRC8_AUTOSAR_8H2F, CRC8_SAE_J1850, crc8 } from '../../src/detect/crc';
import { computeChecksum, type TruthChecksum } from '../../src/eval/generate';
import { field, makeFrames, prng, writeField } from './synthetic';

/** Frames with a counter, a ramp and noise, and a checksum computed by the evaluator's generator code. */
function framesWith(cs: TruthChecksum, chk: ReturnType<typeof field>, id = 0x1a4, length = 8) {
  const rand = prng(11);
  return makeFrames(
    400,
    length,
    (t, d) => {
      writeField(d, field(8, 4), t % 16);
      d[2] = Math.floor(t / 2) & 0xff;
      // A noisy sensor, not a uniformly random byte: XOR and ~sum checksums are symmetric, and a byte of
      // pure noise would be as good a checksum position as the real one.
      d[3] = (100 + Math.round(20 * Math.sin(t / 15)) + Math.floor(rand() * 5)) & 0xff;
      if (length > 5) d[5] = Math.floor(rand() * 4);
      d[chk.startBit >> 3] = 0;
      writeField(d, chk, computeChecksum(cs, d, chk));
    },
    id,
  );
}

describe('CRC-8 parameters', () => {
  const check = Uint8Array.from(Buffer.from('123456789'));
  const all = [...check.keys()];
  it('match the published check values', () => {
    expect(crc8(CRC8_SAE_J1850, check, all)).toBe(0x4b);
    expect(crc8(CRC8_AUTOSAR_8H2F, check, all)).toBe(0xdf);
  });
});

describe('checksum detector', () => {
  const last = field(56, 8);
  const cases: Array<[string, TruthChecksum, string]> = [
    ['XOR', { algorithm: 'xor8', constant: 0, label: '' }, 'xor'],
    ['plain sum', { algorithm: 'sum8', constant: 0, label: '' }, 'sum'],
    [
      'sum + id bytes (Tesla)',
      { algorithm: 'sum8', constant: (0x01 + 0xa4) & 0xff, label: '' },
      'sum+id bytes (Tesla style)',
    ],
    [
      'Toyota',
      { algorithm: 'sum8', constant: (0x01 + 0xa4 + 8) & 0xff, label: '' },
      'toyota (id bytes + length + data)',
    ],
    ['sum + constant', { algorithm: 'sum8', constant: 0x37, label: '' }, 'sum+0x37'],
    ['inverted sum', { algorithm: 'negsum8', constant: 0xff, label: '' }, 'inverted sum (~sum)'],
    ['CRC-8 SAE J1850', { algorithm: 'crc8_sae_j1850', constant: 0, label: '' }, 'crc8_sae_j1850'],
    ['CRC-8 8H2F', { algorithm: 'crc8_autosar_8h2f', constant: 0, label: '' }, 'crc8_autosar_8h2f'],
    [
      '8H2F + data id appended',
      { algorithm: 'crc8_autosar_8h2f', constant: 0, dataId: 0x5a, dataIdPlacement: 'append', label: '' },
      'crc8_autosar_8h2f + data id 0x5A appended',
    ],
    [
      'J1850 + data id prepended',
      { algorithm: 'crc8_sae_j1850', constant: 0, dataId: 0xc3, dataIdPlacement: 'prepend', label: '' },
      'crc8_sae_j1850 + data id 0xC3 prepended',
    ],
  ];
  it.each(cases)('identifies %s in the last byte', (_name, cs, variant) => {
    const found = detectChecksums(messageFrames(framesWith(cs, last)));
    expect(found).toHaveLength(1);
    const c = found[0]!;
    expect(c.field).toEqual(last);
    expect(c.algorithm).toBe(cs.algorithm);
    expect(c.constant).toBe(cs.constant);
    expect(c.dataId).toBe(cs.dataId);
    expect(c.dataIdPlacement).toBe(cs.dataIdPlacement);
    expect(c.variant).toBe(variant);
    expect(c.matchRate).toBe(1);
    expect(c.confidence).toBeGreaterThan(0.5);
    if (cs.algorithm === 'xor8' || cs.algorithm === 'negsum8')
      expect(c.evidence.join(' ')).toMatch(/symmetric/);
  });

  it('finds a CRC in the first byte', () => {
    const first = field(0, 8);
    const found = detectChecksums(
      messageFrames(framesWith({ algorithm: 'crc8_sae_j1850', constant: 0, label: '' }, first)),
    );
    expect(found.map((c) => [c.field, c.algorithm])).toEqual([[first, 'crc8_sae_j1850']]);
  });

  it('identifies a Honda-style nibble checksum and a nibble sum', () => {
    const honda = detectChecksums(
      messageFrames(
        framesWith(
          { algorithm: 'nibble_negsum', constant: (8 - (1 + 0xa + 4)) & 0xf, label: '' },
          field(60, 4),
        ),
      ),
    );
    expect(honda).toHaveLength(1);
    expect(honda[0]!.field).toEqual(field(60, 4));
    expect(honda[0]!.variant).toMatch(/^honda/);
    const sum = detectChecksums(
      messageFrames(framesWith({ algorithm: 'nibble_sum', constant: 0, label: '' }, field(4, 4))),
    );
    expect(sum[0]!.field).toEqual(field(4, 4));
    expect(sum[0]!.algorithm).toBe('nibble_sum');
  });

  it('does not invent checksums in counter-and-noise frames', () => {
    const rand = prng(3);
    const frames = makeFrames(400, 8, (t, d) => {
      d[0] = t & 0xff;
      for (let i = 1; i < 8; i++) d[i] = Math.floor(rand() * 256);
    });
    expect(detectChecksums(messageFrames(frames))).toEqual([]);
  });
});

import { buildDraftDbc, detectAll } from '../../src/detect';
import { buildDraftMessage } from '../../src/detect/draft';
import type { IdFindings } from '../../src/detect/types';
import { parseDbc } from '../../src/dbc/parse';
import { writeDbc } from '../../src/dbc/write';
import { decodeMessage } from '../../src/dbc/codec';
import { computeChecksum } from '../../src/eval/generate';
import { field, makeFrames, writeField } from './synthetic';

function capture() {
  const a = makeFrames(
    800,
    8,
    (t, d) => {
      writeField(d, field(0, 12), Math.round(2000 + 1800 * Math.sin(t / 40)));
      writeField(d, field(12, 10), Math.round(300 * Math.sin(t / 25)) & 0x3ff);
      writeField(d, field(30, 1), Math.floor(t / 111) % 2);
      writeField(d, field(48, 4), t % 16);
      writeField(
        d,
        field(56, 8),
        computeChecksum({ algorithm: 'crc8_sae_j1850', constant: 0, label: '' }, d, field(56, 8)),
      );
    },
    0x123,
  );
  const b = makeFrames(
    800,
    4,
    (t, d) => writeField(d, field(7, 16, 'big_endian'), Math.round(30000 + 20000 * Math.cos(t / 60))),
    0x18daf110,
    true,
  );
  return [...a, ...b];
}

describe('draft DBC', () => {
  const findings = detectAll(capture());
  const draft = buildDraftDbc(findings);

  it('has one message per id with named signals carrying evidence', () => {
    expect(draft.messages.map((m) => [m.id, m.extended])).toEqual([
      [0x123, false],
      [0x18daf110, true],
    ]);
    const names = draft.messages[0]!.signals.map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'CNT_0x123',
        'CHK_0x123',
        'SIG_0x123_b0_12',
        'SIG_0x123_b12_10',
        'FLAG_0x123_b30_1',
      ]),
    );
    const chk = draft.messages[0]!.signals.find((s) => s.name === 'CHK_0x123')!;
    expect(chk.comment).toMatch(/crc8_sae_j1850/);
    expect(draft.messages[0]!.signals.find((s) => s.name === 'SIG_0x123_b12_10')!.signed).toBe(true);
    expect(draft.messages[1]!.signals.map((s) => [s.startBit, s.length, s.byteOrder])).toEqual([
      [7, 16, 'big_endian'],
    ]);
  });

  it('loads back through the project parser: parseDbc(writeDbc(draft))', () => {
    const text = writeDbc(draft);
    const back = parseDbc(text, 'draft.dbc');
    expect(back.messages.map((m) => m.name)).toEqual(draft.messages.map((m) => m.name));
    for (let i = 0; i < draft.messages.length; i++) {
      const a = draft.messages[i]!;
      const b = back.messages[i]!;
      expect(b.id).toBe(a.id);
      expect(b.extended).toBe(a.extended);
      expect(b.signals.map((s) => [s.name, s.startBit, s.length, s.byteOrder, s.signed])).toEqual(
        a.signals.map((s) => [s.name, s.startBit, s.length, s.byteOrder, s.signed]),
      );
      expect(b.signals.map((s) => s.comment)).toEqual(a.signals.map((s) => s.comment));
    }
    // The draft decodes the frames it was drafted from: the counter reads back as the counter.
    const frame = capture()[5]!;
    const decoded = decodeMessage(back.messages[0]!, frame.data);
    expect(decoded.find((s) => s.name === 'CNT_0x123')?.raw).toBe(5);
  });

  it('resolves overlapping claims by confidence: the loser is trimmed or dropped', () => {
    const base: IdFindings = {
      ...findings.ids[0]!,
      counters: [],
      checksums: [],
      fields: [],
      flags: [],
      valueTables: [],
      multiplexers: [],
    };
    const mk = (startBit: number, length: number, confidence: number) => ({
      kind: 'field' as const,
      field: field(startBit, length),
      confidence,
      evidence: ['test'],
      signed: false,
      signedConfidence: 0.5,
      byteOrderConfidence: 0.5,
      distinctValues: 10,
      minRaw: 0,
      maxRaw: 1,
    });
    const msg = buildDraftMessage({
      ...base,
      counters: [
        {
          kind: 'counter',
          field: field(8, 4),
          step: 1,
          modulus: 16,
          matchRate: 1,
          confidence: 0.99,
          evidence: ['c'],
        },
      ],
      fields: [mk(4, 8, 0.7), mk(10, 4, 0.5), mk(20, 8, 0.8), mk(18, 4, 0.6), mk(9, 2, 0.4)],
    });
    const sig = msg.signals.map((s) => [s.name, s.startBit, s.length]);
    expect(sig).toEqual([
      ['SIG_0x123_b4_4', 4, 4], // trimmed: bits 8-11 went to the counter
      ['CNT_0x123', 8, 4],
      ['SIG_0x123_b12_2', 12, 2], // trimmed at its low end
      ['SIG_0x123_b18_2', 18, 2], // trimmed by the more confident field at 20
      ['SIG_0x123_b20_8', 20, 8],
    ]);
    expect(msg.comment).toMatch(/dropped overlapping claims: field at bit 9 len 2/);
  });
});

import { readFileSync } from 'node:fs';
import type { DbcMessage } from '../../src/dbc/model';
import { parseDbc } from '../../src/dbc/parse';
import { extractSignalRaw } from '../../src/dbc/codec';
import { formatId } from '../../src/analysis/bits';
import type { CanFrame } from '../../src/frame';
import { readCapture } from '../../src/formats';
import { formatRealTable, scoreRealCapture, type RealScore } from '../../src/eval/real';
import { rate } from '../../src/eval/score';
import { detectFromFramesOnly } from '../../src/eval/run';
import { fixture } from '../fixtures';
import { field, makeFrames, toyotaChecksum, writeField } from '../detect/synthetic';

jest.setTimeout(300_000);

/**
 * Every detector on real traffic: comma.ai's 60 s RAV4 radar capture (comma2k19) against
 * opendbc's toyota_adas.dbc, which describes it. The detectors see the frames only (through the
 * evaluator's one door); the DBC is the truth. Definitions of what is scored: src/eval/real.ts and
 * docs/detectors.md. Targets from issue 19: boundaries exact >= 80% of moving signals, counters and
 * checksums precision >= 0.95 and recall >= 0.9, no false multiplexer; the other minimums sit a
 * little under what the detectors reach here.
 */

/** The checksum rule the DBC cannot state (test/detect/synthetic.ts: opendbc's toyota_checksum). */
const toyota = (m: DbcMessage, data: Uint8Array): number => toyotaChecksum(m.id, m.extended, data);

describe('detectors scored on a real capture (RAV4 radar bus, toyota_adas.dbc)', () => {
  const db = parseDbc(readFileSync(fixture('real', 'toyota_adas.dbc'), 'latin1'), 'toyota_adas.dbc');
  const frames: CanFrame[] = [];
  let score: RealScore;

  beforeAll(async () => {
    for await (const f of readCapture(fixture('real', 'rav4-2018-radar.log'))) frames.push(f);
    score = scoreRealCapture(detectFromFramesOnly(frames), db, frames, { checksumRule: toyota });
    console.log(
      [
        'canlab detectors on a real capture: RAV4 2018 radar bus, 60 s, 45,000 frames, toyota_adas.dbc as truth',
        formatRealTable([{ name: 'rav4-2018-radar', score }]),
        'Moving = the raw value takes two or more values in the capture. Exact = a detection of any kind has',
        'the signal’s bit set; covered = a detection inside the signal holds all of its moving bits.',
        'Misses:',
        ...score.misses.map((m) => `  ${m}`),
      ].join('\n'),
    );
  });

  it('the truth holds: every CHECKSUM follows Toyota’s rule on every frame', () => {
    let checked = 0;
    for (const m of db.messages) {
      const signal = m.signals.find((s) => s.name === 'CHECKSUM');
      if (!signal) continue;
      for (const f of frames.filter((x) => x.id === m.id && x.data.length === m.length)) {
        expect(extractSignalRaw(f.data, signal)).toBe(toyota(m, f.data));
        checked++;
      }
    }
    expect(checked).toBe(38400);
  });

  it('meets the targets: boundaries exact, counters and checksums, no false multiplexer', () => {
    expect(score.messages).toBe(33);
    expect(score.movingSignals).toBe(166);
    expect(rate(score.boundaryExact)).toBeGreaterThanOrEqual(0.8);
    for (const pr of [score.counters, score.checksums]) {
      expect(pr.tp / (pr.tp + pr.fp)).toBeGreaterThanOrEqual(0.95);
      expect(pr.tp / (pr.tp + pr.fn)).toBeGreaterThanOrEqual(0.9);
    }
    expect(score.multiplexers.fp).toBe(0);
    expect(score.undescribedMultiplexers).toEqual([]);
  });

  it('holds the other detectors at what they reach here', () => {
    expect(rate(score.boundaryExactData)).toBeGreaterThanOrEqual(0.7);
    expect(rate(score.boundaryCovering)).toBeGreaterThanOrEqual(0.85);
    expect(rate(score.boundaryPrecision)).toBeGreaterThanOrEqual(0.75);
    expect(rate(score.checksumAlgorithm)).toBe(1);
    expect(rate(score.signedness)).toBeGreaterThanOrEqual(0.9);
    expect(rate(score.endianness)).toBe(1);
    expect(score.flags.tp / (score.flags.tp + score.flags.fp)).toBeGreaterThanOrEqual(0.85);
    expect(score.flags.tp / (score.flags.tp + score.flags.fn)).toBeGreaterThanOrEqual(0.9);
    expect(score.valueTables.fp).toBeLessThanOrEqual(8);
    expect(score.sparseIds).toEqual([formatId(0x123, false)]);
  });

  it('reports no multiplexer when only the first 100 to 800 frames of each id are analysed', () => {
    for (const n of [100, 200, 400, 800]) {
      const seen = new Map<number, number>();
      const head = frames.filter((f) => {
        const k = (seen.get(f.id) ?? 0) + 1;
        seen.set(f.id, k);
        return k <= n;
      });
      const found = detectFromFramesOnly(head).ids.flatMap((i) =>
        i.multiplexers.map(() => `${i.key} (${n} frames)`),
      );
      expect(found).toEqual([]);
    }
  });
});

describe('what the real-capture score counts', () => {
  const db = parseDbc(
    [
      'VERSION ""',
      'BS_:',
      'BU_: XXX',
      'BO_ 291 M: 5 XXX',
      ' SG_ SCORE : 7|8@0+ (1,0) [0|100] "" XXX',
      ' SG_ SPEED : 15|12@0+ (1,0) [0|4095] "" XXX',
      ' SG_ SPARE : 27|4@0+ (1,0) [0|15] "" XXX',
      '',
    ].join('\n'),
    'm.dbc',
  );
  // SCORE stays under 128 (its top bit never moves), SPEED ramps, SPARE never moves, byte 4 holds a
  // counter the DBC does not describe.
  const frames = makeFrames(400, 5, (t, d) => {
    writeField(d, field(7, 8, 'big_endian'), Math.round(60 + 40 * Math.sin(t / 30)));
    writeField(d, field(15, 12, 'big_endian'), Math.round(2000 + 1500 * Math.sin(t / 50)));
    d[4] = t & 0xff;
  });

  it('scores moving signals only, counts a field short of bits that never move as covered, not exact, and leaves undocumented bits out', () => {
    const s = scoreRealCapture(detectFromFramesOnly(frames), db, frames);
    expect([s.signals, s.movingSignals]).toEqual([3, 2]);
    expect(s.boundaryExact).toEqual({ hit: 1, total: 2 });
    expect(s.boundaryCovering).toEqual({ hit: 2, total: 2 });
    expect(s.misses.join('\n')).toMatch(/SCORE 7\|8@0 \(7 moving bits\) found as field 6\|7@/);
    expect(s.undocumented).toBe(1);
  });
});

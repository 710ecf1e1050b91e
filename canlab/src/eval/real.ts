/**
 * Scores detector findings on a real capture against the DBC that describes it. Unlike the
 * synthetic suite (`generate.ts`), nothing here is generated: the frames are what a vehicle sent,
 * and the truth is the signal database someone reverse-engineered for it. Only what the frames can
 * show is scored: a signal that never moves in the capture cannot be found from it.
 *
 * Definitions (docs/detectors.md repeats them):
 * - a DBC message is scored when the capture holds frames of its id with the DBC's payload length;
 *   its integer signals inside the payload are its signals;
 * - a signal is *moving* when its raw value takes at least two values over those frames (over the
 *   frames its multiplexer selects, for a multiplexed one); its *moving bits* are the bits of its
 *   field that differ between at least two of them;
 * - a moving signal's boundary is found *exactly* when a detection of any kind (field, flag,
 *   counter, checksum, multiplexer) in its multiplexer scope has the same bit set; it is *covered*
 *   when a detection lies inside it and holds all of its moving bits;
 * - detections wholly on bits no DBC signal of the message describes are counted apart
 *   (`undocumented`): the bits move, but the DBC cannot say what they are;
 * - roles come from signal names by the synthetic suite's rule (`roleOf`); counters and checksums
 *   are scored by precision and recall over ids with at least MIN_DISTINCT_PAYLOADS distinct
 *   payloads, the detectors' own minimum for claiming structure.
 */
import { bitSetKey, bytesSpanned, fieldBits, formatId, readField, type FieldRef } from '../analysis/bits';
import type { DbcDatabase, DbcMessage } from '../dbc/model';
import { distinctPayloads, MIN_DISTINCT_PAYLOADS } from '../detect/frames';
import type { Findings } from '../detect/types';
import type { CanFrame } from '../frame';
import { computeChecksum, roleOf, type SignalRole } from './generate';
import { detections, rate, signedF1, textTable, type Detected, type Ratio } from './score';

export interface PrecisionRecall {
  tp: number;
  fp: number;
  fn: number;
}

export interface RealTruthSignal {
  name: string;
  field: FieldRef;
  signed: boolean;
  role: SignalRole;
  multiplexerValue?: number;
  moving: boolean;
  movingBits: number[];
  /** Whether the raw value's most significant bit took both values (only then can signedness be seen). */
  signObservable: boolean;
  hasValueTable: boolean;
}

export interface RealScore {
  /** DBC messages with frames of the DBC's length in the capture. */
  messages: number;
  /** Ids in the capture the DBC does not describe (their findings are not scored). */
  undescribedIds: string[];
  signals: number;
  movingSignals: number;
  boundaryExact: Ratio;
  /** The same over moving signals other than counters and checksums. */
  boundaryExactData: Ratio;
  boundaryCovering: Ratio;
  /** Detections touching a DBC signal's bits whose bit set equals a DBC signal's. */
  boundaryPrecision: Ratio;
  /** Detections on described ids that lie wholly on bits no DBC signal describes (not scored). */
  undocumented: number;
  /** Exactly found data signals longer than a bit whose MSB took both values. */
  signedness: Ratio;
  /** The same as counts with signed as the positive class (CAN-D reports this F-score). */
  signedCounts: { tp: number; fp: number; fn: number };
  /** Exactly found data signals spanning more than one byte. */
  endianness: Ratio;
  counters: PrecisionRecall;
  checksums: PrecisionRecall;
  /** Checksums found at the right position whose rule reproduces the documented one on every frame. */
  checksumAlgorithm: Ratio;
  /** The DBC's moving one-bit data signals against reported flags. */
  flags: PrecisionRecall;
  /** Moving DBC signals with a VAL_ table against value tables reported on documented bits. */
  valueTables: PrecisionRecall;
  multiplexers: PrecisionRecall;
  /** Multiplexers reported on ids the DBC does not describe (listed; the DBC cannot judge them). */
  undescribedMultiplexers: string[];
  /** Ids left out of the counter and checksum scores for too few distinct payloads. */
  sparseIds: string[];
  misses: string[];
}

export interface RealScoreOptions {
  /**
   * The checksum rule the DBC's authors documented outside the DBC (a DBC cannot say it), to score
   * the algorithm: the detected rule must reproduce it on every frame.
   */
  checksumRule?: (m: DbcMessage, data: Uint8Array) => number;
}

/** Frames of a DBC message as the detectors analyse them: its id, the DBC's payload length. */
function messageData(frames: readonly CanFrame[], m: DbcMessage): Uint8Array[] {
  return frames
    .filter(
      (f) =>
        !f.error && !f.remote && f.id === m.id && f.extended === m.extended && f.data.length === m.length,
    )
    .map((f) => f.data);
}

const bitOf = (d: Uint8Array, b: number): number => (d[b >> 3]! >> (b & 7)) & 1;

/** The truth of one message's signals, with what the frames show of them. */
export function realTruth(m: DbcMessage, data: readonly Uint8Array[]): RealTruthSignal[] {
  const selector = m.signals.find((s) => s.isMultiplexer && s.multiplexerValue === undefined);
  return m.signals
    .filter((s) => s.valueType === 'integer' && fieldBits(s).every((b) => b >= 0 && b < m.length * 8))
    .map((s) => {
      const field: FieldRef = { startBit: s.startBit, length: s.length, byteOrder: s.byteOrder };
      const active =
        selector && s.multiplexerValue !== undefined
          ? data.filter((d) => readField(d, selector) === s.multiplexerValue)
          : data;
      const bits = fieldBits(field);
      const first = active[0];
      const movingBits = first ? bits.filter((b) => active.some((d) => bitOf(d, b) !== bitOf(first, b))) : [];
      const msb = bits[bits.length - 1]!;
      return {
        name: s.name,
        field,
        signed: s.signed,
        role: roleOf(s),
        ...(s.multiplexerValue === undefined ? {} : { multiplexerValue: s.multiplexerValue }),
        moving: movingBits.length > 0,
        movingBits,
        signObservable: movingBits.includes(msb),
        hasValueTable: (s.valueTable?.size ?? 0) > 0,
      };
    });
}

function inScope(t: RealTruthSignal, d: Detected): boolean {
  return t.role === 'multiplexer' ? d.kind === 'multiplexer' : t.multiplexerValue === d.multiplexerValue;
}

const describe = (f: FieldRef): string =>
  `${f.startBit}|${f.length}@${f.byteOrder === 'little_endian' ? 1 : 0}`;

/** Adds one role's counts: the truth signals of the role against the detections of one kind. */
function scoreRole(
  pr: PrecisionRecall,
  truth: readonly RealTruthSignal[],
  found: readonly FieldRef[],
  misses: string[],
  label: string,
): void {
  const keys = new Set(truth.map((t) => bitSetKey(t.field)));
  const foundKeys = new Set(found.map(bitSetKey));
  for (const t of truth) {
    if (foundKeys.has(bitSetKey(t.field))) pr.tp++;
    else {
      pr.fn++;
      misses.push(`${label}: missed ${t.name} ${describe(t.field)}`);
    }
  }
  for (const f of found)
    if (!keys.has(bitSetKey(f))) {
      pr.fp++;
      misses.push(`${label}: reported at ${describe(f)}, where the DBC has none`);
    }
}

export function scoreRealCapture(
  findings: Findings,
  db: DbcDatabase,
  frames: readonly CanFrame[],
  options: RealScoreOptions = {},
): RealScore {
  const byKey = new Map(findings.ids.map((f) => [f.key, f]));
  const described = new Set(db.messages.map((m) => formatId(m.id, m.extended)));
  const empty = (): PrecisionRecall => ({ tp: 0, fp: 0, fn: 0 });
  const undescribed = findings.ids.filter((f) => !described.has(f.key));
  const s: RealScore = {
    messages: 0,
    undescribedIds: undescribed.map((f) => f.key),
    signals: 0,
    movingSignals: 0,
    boundaryExact: { hit: 0, total: 0 },
    boundaryExactData: { hit: 0, total: 0 },
    boundaryCovering: { hit: 0, total: 0 },
    boundaryPrecision: { hit: 0, total: 0 },
    undocumented: 0,
    signedness: { hit: 0, total: 0 },
    signedCounts: { tp: 0, fp: 0, fn: 0 },
    endianness: { hit: 0, total: 0 },
    counters: empty(),
    checksums: empty(),
    checksumAlgorithm: { hit: 0, total: 0 },
    flags: empty(),
    valueTables: empty(),
    multiplexers: empty(),
    undescribedMultiplexers: undescribed.flatMap((f) =>
      f.multiplexers.map((m) => `${f.key} ${describe(m.field)}`),
    ),
    sparseIds: [],
    misses: [],
  };
  for (const m of db.messages) {
    const data = messageData(frames, m);
    if (data.length === 0) continue;
    s.messages++;
    const idf = byKey.get(formatId(m.id, m.extended));
    const truth = realTruth(m, data);
    const moving = truth.filter((t) => t.moving);
    const misses: string[] = [];
    const documented = new Set(truth.flatMap((t) => fieldBits(t.field)));
    const onDocumented = (f: FieldRef): boolean => fieldBits(f).some((b) => documented.has(b));
    const all = idf ? detections(idf) : [];
    const det = all.filter((d) => onDocumented(d.field));
    s.undocumented += all.length - det.length;
    s.signals += truth.length;
    s.movingSignals += moving.length;
    s.boundaryPrecision.total += det.length;
    for (const d of det)
      if (truth.some((t) => inScope(t, d) && bitSetKey(t.field) === bitSetKey(d.field)))
        s.boundaryPrecision.hit++;
    for (const t of moving) {
      const own = new Set(fieldBits(t.field));
      const scoped = det.filter((d) => inScope(t, d));
      const match = scoped.find((d) => bitSetKey(d.field) === bitSetKey(t.field));
      const covers = scoped.some((d) => {
        const bits = fieldBits(d.field);
        return bits.every((b) => own.has(b)) && t.movingBits.every((b) => bits.includes(b));
      });
      const data = t.role !== 'counter' && t.role !== 'checksum';
      s.boundaryExact.total++;
      s.boundaryCovering.total++;
      if (data) s.boundaryExactData.total++;
      if (match) {
        s.boundaryExact.hit++;
        if (data) s.boundaryExactData.hit++;
      } else {
        const parts = scoped.filter((d) => fieldBits(d.field).some((b) => own.has(b)));
        misses.push(
          `boundary: ${t.name} ${describe(t.field)} (${t.movingBits.length} moving bits) found as ${parts.map((d) => `${d.kind} ${describe(d.field)}`).join(', ') || 'nothing'}`,
        );
      }
      if (match || covers) s.boundaryCovering.hit++;
      if (!match || t.role !== 'data' || t.field.length < 2) continue;
      if (t.signObservable) {
        s.signedness.total++;
        if (match.signed === t.signed) s.signedness.hit++;
        else misses.push(`signedness: ${t.name} is ${t.signed ? 'signed' : 'unsigned'}`);
        if (match.signed && t.signed) s.signedCounts.tp++;
        else if (match.signed) s.signedCounts.fp++;
        else if (t.signed) s.signedCounts.fn++;
      }
      if (bytesSpanned(t.field) > 1) {
        s.endianness.total++;
        if (match.field.byteOrder === t.field.byteOrder) s.endianness.hit++;
      }
    }
    const ofKind = (kind: Detected['kind']): FieldRef[] =>
      det.filter((d) => d.kind === kind).map((d) => d.field);
    scoreRole(
      s.flags,
      moving.filter((t) => t.role === 'data' && t.field.length === 1),
      ofKind('flag'),
      misses,
      'flag',
    );
    scoreRole(
      s.multiplexers,
      moving.filter((t) => t.role === 'multiplexer'),
      ofKind('multiplexer'),
      misses,
      'multiplexer',
    );
    scoreRole(
      s.valueTables,
      moving.filter((t) => t.hasValueTable),
      (idf?.valueTables ?? []).map((v) => v.field).filter(onDocumented),
      misses,
      'value table',
    );
    if (distinctPayloads(data, MIN_DISTINCT_PAYLOADS) < MIN_DISTINCT_PAYLOADS)
      s.sparseIds.push(formatId(m.id, m.extended));
    else {
      const checksums = moving.filter((t) => t.role === 'checksum');
      scoreRole(
        s.counters,
        moving.filter((t) => t.role === 'counter'),
        ofKind('counter'),
        misses,
        'counter',
      );
      scoreRole(s.checksums, checksums, ofKind('checksum'), misses, 'checksum');
      const rule = options.checksumRule;
      for (const t of rule ? checksums : []) {
        const found = idf?.checksums.find((c) => bitSetKey(c.field) === bitSetKey(t.field));
        if (!found) continue;
        s.checksumAlgorithm.total++;
        const reproduces = data.every(
          (d) => computeChecksum({ ...found, label: found.variant }, d, found.field) === rule!(m, d),
        );
        if (reproduces) s.checksumAlgorithm.hit++;
        else misses.push(`checksum algorithm: ${t.name} found as ${found.variant}`);
      }
    }
    s.misses.push(...misses.map((line) => `${m.name} ${line}`));
  }
  return s;
}

const pct = (r: Ratio): string => `${(rate(r) * 100).toFixed(1)}% (${r.hit}/${r.total})`;
const precision = (p: PrecisionRecall): Ratio => ({ hit: p.tp, total: p.tp + p.fp });
const recall = (p: PrecisionRecall): Ratio => ({ hit: p.tp, total: p.tp + p.fn });
const pr = (p: PrecisionRecall): string => `P ${pct(precision(p))}, R ${pct(recall(p))}`;

/** The printed real-capture table: one column per score. */
export function formatRealTable(rows: Array<{ name: string; score: RealScore }>): string {
  const metrics: Array<[string, (s: RealScore) => string]> = [
    ['DBC messages in the capture', (s) => String(s.messages)],
    ['ids the DBC does not describe (unscored)', (s) => String(s.undescribedIds.length)],
    ['signals (integer, inside the payload)', (s) => String(s.signals)],
    ['  moving (the denominator)', (s) => String(s.movingSignals)],
    ['boundaries exact, moving signals', (s) => pct(s.boundaryExact)],
    ['boundaries exact, data signals only', (s) => pct(s.boundaryExactData)],
    ['boundaries covered (inside, all moving bits)', (s) => pct(s.boundaryCovering)],
    ['boundary precision (on documented bits)', (s) => pct(s.boundaryPrecision)],
    ['findings on undocumented bits', (s) => String(s.undocumented)],
    ['signedness (exact, MSB moves)', (s) => pct(s.signedness)],
    [
      'signedness F1 (signed = positive)',
      (s) =>
        `${(signedF1(s.signedCounts) * 100).toFixed(1)}% (tp ${s.signedCounts.tp} fp ${s.signedCounts.fp} fn ${s.signedCounts.fn})`,
    ],
    ['endianness (exact, multi-byte)', (s) => pct(s.endianness)],
    ['counters', (s) => pr(s.counters)],
    ['checksums (position)', (s) => pr(s.checksums)],
    ['checksum rule reproduced on every frame', (s) => pct(s.checksumAlgorithm)],
    ['flags (1-bit data signals)', (s) => pr(s.flags)],
    ['value tables (VAL_ signals) true / false', (s) => `${s.valueTables.tp} / ${s.valueTables.fp}`],
    ['multiplexers true / false', (s) => `${s.multiplexers.tp} / ${s.multiplexers.fp}`],
    ['multiplexers on undescribed ids', (s) => String(s.undescribedMultiplexers.length)],
    [`ids under ${MIN_DISTINCT_PAYLOADS} distinct payloads`, (s) => String(s.sparseIds.length)],
  ];
  return textTable(
    ['metric', ...rows.map((r) => r.name)],
    metrics.map(([label, fn]) => [label, ...rows.map((r) => fn(r.score))]),
  );
}

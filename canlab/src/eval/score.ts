/**
 * Scores detector findings against generated ground truth. Matching is by bit set (a DBC start bit
 * and length in either byte order describe the same bits when the field sits inside one byte) and
 * multiplexer page.
 */
import { bitSetKey, bytesSpanned, fieldBits, formatId, type FieldRef } from '../analysis/bits';
import type { Findings, IdFindings } from '../detect/types';
import type { TruthMessage, TruthSignal } from './generate';

export interface Detected {
  kind: 'counter' | 'checksum' | 'multiplexer' | 'field' | 'flag';
  field: FieldRef;
  signed: boolean;
  multiplexerValue?: number;
  algorithm?: string;
  constant?: number;
  dataId?: number;
  dataIdPlacement?: string;
}

export interface Ratio {
  hit: number;
  total: number;
}

export interface EvalScore {
  messages: number;
  truthSignals: number;
  excludedSignals: number;
  constantSignals: number;
  varyingSignals: number;
  detected: number;
  boundaryExact: { recall: Ratio; precision: Ratio };
  /** Exact recall over signals whose every bit toggled in the trace (the extent a detector can see). */
  boundaryExactExercised: Ratio;
  signedCounts: { tp: number; fp: number; fn: number };
  /** Mean over varying truth signals of the best Jaccard overlap of bit sets with a detection, and its converse. */
  overlapRecall: number;
  overlapPrecision: number;
  counters: Ratio;
  checksumsPosition: Ratio;
  checksumsAlgorithm: Ratio;
  endianness: Ratio;
  endiannessMultiByte: Ratio;
  signedness: Ratio;
  signedF1: number;
  multiplexers: Ratio;
  misses: string[];
}

export function detections(idf: IdFindings): Detected[] {
  return [
    ...idf.counters.map((c): Detected => ({ kind: 'counter', field: c.field, signed: false })),
    ...idf.checksums.map((c): Detected => ({
      kind: 'checksum',
      field: c.field,
      signed: false,
      algorithm: c.algorithm,
      constant: c.constant,
      dataId: c.dataId,
      dataIdPlacement: c.dataIdPlacement,
    })),
    ...idf.multiplexers.map((m): Detected => ({ kind: 'multiplexer', field: m.field, signed: false })),
    ...idf.fields.map((f): Detected => ({
      kind: 'field',
      field: f.field,
      signed: f.signed,
      multiplexerValue: f.multiplexerValue,
    })),
    ...idf.flags.map((f): Detected => ({
      kind: 'flag',
      field: f.field,
      signed: false,
      multiplexerValue: f.multiplexerValue,
    })),
  ];
}

function jaccard(a: FieldRef, b: FieldRef): number {
  const sa = new Set(fieldBits(a));
  const sb = fieldBits(b);
  const inter = sb.filter((x) => sa.has(x)).length;
  return inter / (sa.size + sb.length - inter);
}

function sameScope(t: TruthSignal, d: Detected): boolean {
  return t.multiplexerValue === d.multiplexerValue;
}

const ratio = (r: Ratio): number => (r.total ? r.hit / r.total : 1);

export function scoreFindings(findings: Findings, truth: readonly TruthMessage[]): EvalScore {
  const byKey = new Map(findings.ids.map((f) => [f.key, f]));
  const s: EvalScore = {
    messages: truth.length,
    truthSignals: 0,
    excludedSignals: 0,
    constantSignals: 0,
    varyingSignals: 0,
    detected: 0,
    boundaryExact: { recall: { hit: 0, total: 0 }, precision: { hit: 0, total: 0 } },
    boundaryExactExercised: { hit: 0, total: 0 },
    signedCounts: { tp: 0, fp: 0, fn: 0 },
    overlapRecall: 0,
    overlapPrecision: 0,
    counters: { hit: 0, total: 0 },
    checksumsPosition: { hit: 0, total: 0 },
    checksumsAlgorithm: { hit: 0, total: 0 },
    endianness: { hit: 0, total: 0 },
    endiannessMultiByte: { hit: 0, total: 0 },
    signedness: { hit: 0, total: 0 },
    signedF1: 0,
    multiplexers: { hit: 0, total: 0 },
    misses: [],
  };
  let overlapR = 0;
  let overlapP = 0;
  let tp = 0;
  let fp = 0;
  let fn = 0;
  for (const tm of truth) {
    const idf = byKey.get(formatId(tm.id, tm.extended));
    const det = idf ? detections(idf) : [];
    s.truthSignals += tm.signals.length + tm.excluded.length;
    s.excludedSignals += tm.excluded.length;
    const varying = tm.signals.filter((t) => t.varies);
    s.constantSignals += tm.signals.length - varying.length;
    s.varyingSignals += varying.length;
    s.detected += det.length;
    s.boundaryExact.precision.total += det.length;
    for (const d of det) {
      const key = bitSetKey(d.field);
      if (tm.signals.some((t) => (sameScope(t, d) || t.role === 'multiplexer') && bitSetKey(t.field) === key))
        s.boundaryExact.precision.hit++;
      let best = 0;
      for (const t of tm.signals)
        if (sameScope(t, d) || t.role === 'multiplexer') best = Math.max(best, jaccard(t.field, d.field));
      overlapP += best;
    }
    for (const t of varying) {
      const key = bitSetKey(t.field);
      const scoped = det.filter(
        (d) => sameScope(t, d) || (t.role === 'multiplexer' && d.kind === 'multiplexer'),
      );
      const match = scoped.find((d) => bitSetKey(d.field) === key);
      s.boundaryExact.recall.total++;
      let best = 0;
      for (const d of scoped) best = Math.max(best, jaccard(t.field, d.field));
      overlapR += best;
      if (match) s.boundaryExact.recall.hit++;
      if (t.exercised) {
        s.boundaryExactExercised.total++;
        if (match) s.boundaryExactExercised.hit++;
      } else if (s.misses.length < 400)
        s.misses.push(
          `${tm.name}.${t.name} (${t.field.startBit}|${t.field.length}@${t.field.byteOrder === 'little_endian' ? 1 : 0}${t.signed ? '-' : '+'} ${t.trace}) best overlap ${best.toFixed(2)}`,
        );
      if (t.role === 'counter') {
        s.counters.total++;
        if (match?.kind === 'counter') s.counters.hit++;
      }
      if (t.role === 'checksum' && t.checksum) {
        s.checksumsPosition.total++;
        s.checksumsAlgorithm.total++;
        if (match?.kind === 'checksum') {
          s.checksumsPosition.hit++;
          const c = t.checksum;
          if (
            match.algorithm === c.algorithm &&
            match.constant === c.constant &&
            match.dataId === c.dataId &&
            match.dataIdPlacement === c.dataIdPlacement
          )
            s.checksumsAlgorithm.hit++;
        }
      }
      if (t.role === 'multiplexer') {
        s.multiplexers.total++;
        if (match?.kind === 'multiplexer') s.multiplexers.hit++;
      }
      if (match && t.field.length > 1 && t.role === 'data') {
        s.endianness.total++;
        const multi = bytesSpanned(t.field) > 1;
        const ok = !multi || match.field.byteOrder === t.field.byteOrder;
        if (ok) s.endianness.hit++;
        if (multi) {
          s.endiannessMultiByte.total++;
          if (ok) s.endiannessMultiByte.hit++;
        }
        s.signedness.total++;
        if (match.signed === t.signed) s.signedness.hit++;
        else if (s.misses.length < 400)
          s.misses.push(
            `SIGNEDNESS ${tm.name}.${t.name} truth ${t.signed ? 'signed' : 'unsigned'} ${t.field.length} bits ${t.trace}`,
          );
        if (match.signed && t.signed) tp++;
        else if (match.signed) fp++;
        else if (t.signed) fn++;
      }
    }
  }
  s.overlapRecall = s.varyingSignals ? overlapR / s.varyingSignals : 1;
  s.overlapPrecision = s.detected ? overlapP / s.detected : 1;
  s.signedCounts = { tp, fp, fn };
  s.signedF1 = signedF1(s.signedCounts);
  return s;
}

export function signedF1(c: { tp: number; fp: number; fn: number }): number {
  return c.tp + c.fp + c.fn === 0 ? 1 : (2 * c.tp) / (2 * c.tp + c.fp + c.fn);
}

const pct = (r: Ratio): string => `${(ratio(r) * 100).toFixed(1)}% (${r.hit}/${r.total})`;

export function rate(r: Ratio): number {
  return ratio(r);
}

/** The printed evaluation table. */
export function formatScoreTable(rows: Array<{ name: string; score: EvalScore }>): string {
  const metrics: Array<[string, (s: EvalScore) => string]> = [
    ['messages', (s) => String(s.messages)],
    ['signals in DBC', (s) => String(s.truthSignals)],
    ['  excluded (overlap/float/>32 bit)', (s) => String(s.excludedSignals)],
    ['  generated constant (not scored for recall)', (s) => String(s.constantSignals)],
    ['  varying (recall denominator)', (s) => String(s.varyingSignals)],
    ['detected fields (all kinds)', (s) => String(s.detected)],
    ['boundary recall, exact start+length', (s) => pct(s.boundaryExact.recall)],
    ['boundary recall, exact, fully exercised signals', (s) => pct(s.boundaryExactExercised)],
    ['boundary precision, exact start+length', (s) => pct(s.boundaryExact.precision)],
    ['boundary F1, exact', (s) => `${(f1(s) * 100).toFixed(1)}%`],
    ['overlap recall (mean best Jaccard)', (s) => `${(s.overlapRecall * 100).toFixed(1)}%`],
    ['overlap precision (mean best Jaccard)', (s) => `${(s.overlapPrecision * 100).toFixed(1)}%`],
    ['counter identification', (s) => pct(s.counters)],
    ['checksum position', (s) => pct(s.checksumsPosition)],
    ['checksum algorithm+params+position', (s) => pct(s.checksumsAlgorithm)],
    ['multiplexer selector', (s) => pct(s.multiplexers)],
    ['endianness (matched, len>1; 1-byte = ok)', (s) => pct(s.endianness)],
    ['endianness, multi-byte signals only', (s) => pct(s.endiannessMultiByte)],
    ['signedness accuracy (matched, len>1)', (s) => pct(s.signedness)],
    [
      'signedness F1 (signed = positive)',
      (s) =>
        s.signedCounts.tp + s.signedCounts.fn === 0
          ? `n/a (no signed; ${s.signedCounts.fp} FP)`
          : `${(s.signedF1 * 100).toFixed(1)}% (tp ${s.signedCounts.tp} fp ${s.signedCounts.fp} fn ${s.signedCounts.fn})`,
    ],
  ];
  return textTable(
    ['metric', ...rows.map((r) => r.name)],
    metrics.map(([label, fn]) => [label, ...rows.map((r) => fn(r.score))]),
  );
}

/** A plain-text table: the first column left-aligned, the others right-aligned. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, c) => Math.max(h.length, ...rows.map((r) => r[c]!.length)));
  const line = (cells: string[]): string =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join(' | ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('-|-'), ...rows.map(line)].join('\n');
}

export function f1(s: EvalScore): number {
  const p = ratio(s.boundaryExact.precision);
  const r = ratio(s.boundaryExact.recall);
  return p + r === 0 ? 0 : (2 * p * r) / (p + r);
}

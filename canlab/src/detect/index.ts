/**
 * Runs every detector over a capture's frames, id by id. Pure: frames in, findings out; the
 * detectors never see a signal database or any other description of the frames.
 */
import type { ByteOrder } from '../dbc/model';
import type { CanFrame } from '../frame';
import { bytesSpanned, fieldBits, readField, toSigned, type FieldRef } from '../analysis/bits';
import { flipProfile, judgeSignedness, segmentFields } from './boundaries';
import { detectChecksums } from './checksums';
import { detectCounters } from './counters';
import { judgeFlag, judgeValueTable } from './flags';
import {
  distinctPayloads,
  flipCounts,
  groupById,
  inByteOrder,
  messageFrames,
  MIN_DISTINCT_PAYLOADS,
  type MessageFrames,
} from './frames';
import { detectMultiplexer } from './multiplexers';
import type { FieldCandidate, Findings, FlagCandidate, IdFindings, ValueTableCandidate } from './types';

export * from './types';
export { buildDraftDbc } from './draft';
export { inByteOrder, MIN_DISTINCT_PAYLOADS } from './frames';

export interface DetectOptions {
  /** Frames per id used by the boundary segmentation (the first ones). Default 1500. */
  maxSegmentFrames?: number;
  /** Ids with fewer frames are listed without detection. Default 8. */
  minFrames?: number;
  /** Checksums and multiplexers are only claimed on ids with this many distinct payloads. Default MIN_DISTINCT_PAYLOADS. */
  minDistinctPayloads?: number;
}

interface FieldJudgement {
  fields: FieldCandidate[];
  flags: FlagCandidate[];
  valueTables: ValueTableCandidate[];
  byteOrder: ByteOrder;
}

function judgeFields(
  data: readonly Uint8Array[],
  length: number,
  available: Set<number>,
  options: DetectOptions,
  multiplexerValue?: number,
): FieldJudgement {
  const out: FieldJudgement = { fields: [], flags: [], valueTables: [], byteOrder: 'little_endian' };
  if (available.size === 0 || data.length < 2) return out;
  const [best, other] = segmentFields(data, length, available, { maxFrames: options.maxSegmentFrames });
  if (!best || !other) return out;
  out.byteOrder = best.byteOrder;
  const n = Math.min(data.length, options.maxSegmentFrames ?? 1500);
  const orderMargin = (other.cost - best.cost) / Math.max(1, n);
  const flips = flipCounts(data, length);
  const mux = multiplexerValue === undefined ? {} : { multiplexerValue };
  for (const seg of best.fields) {
    const field = seg.field;
    if (field.length === 1) {
      const flag = judgeFlag(data, field);
      if (flag) {
        out.flags.push({ ...flag, ...mux });
        continue;
      }
    }
    const values = data.map((d) => readField(d, field));
    const distinct = new Set(values.slice(0, 4096)).size;
    let minRaw = Infinity;
    let maxRaw = -Infinity;
    for (const v of values) {
      if (v < minRaw) minRaw = v;
      if (v > maxRaw) maxRaw = v;
    }
    const sign = judgeSignedness(values, field.length);
    const multiByte = bytesSpanned(field) > 1;
    const byteOrderConfidence = multiByte ? Math.min(0.99, 0.5 + 0.5 * Math.tanh(orderMargin)) : 0.5;
    const gain = (seg.bitsCost - seg.cost) / Math.max(1, n);
    const confidence = field.length === 1 ? 0.4 : Math.min(0.95, 0.55 + 0.4 * Math.tanh(Math.max(0, gain)));
    const signedValues = sign.signed ? values.map((v) => toSigned(v, field.length)) : values;
    out.fields.push({
      kind: 'field',
      field,
      signed: sign.signed,
      signedConfidence: sign.confidence,
      byteOrderConfidence,
      distinctValues: distinct,
      minRaw: sign.signed ? Math.min(...signedValues.slice(0, 65536)) : minRaw,
      maxRaw: sign.signed ? Math.max(...signedValues.slice(0, 65536)) : maxRaw,
      confidence,
      evidence: [
        `flip rate MSB→LSB: ${flipProfile(field, flips, data.length - 1)}`,
        `coded together in ${(seg.cost / n).toFixed(2)} bits/frame vs ${(seg.bitsCost / n).toFixed(2)} bits/frame bit by bit; ${distinct} distinct values`,
        multiByte
          ? `${field.byteOrder === 'little_endian' ? 'Intel' : 'Motorola'} order codes the id ${orderMargin.toFixed(2)} bits/frame shorter than the other order`
          : 'inside one byte: either byte order reads the same value',
        sign.evidence,
        ...(seg.joins ?? []),
      ],
      ...mux,
    });
    const table = judgeValueTable(data, field);
    if (table) out.valueTables.push({ ...table, ...mux });
  }
  return out;
}

/** Whether `field` holds one value under each value of `selector`. */
function fixedPerPage(data: readonly Uint8Array[], selector: FieldRef, field: FieldRef): boolean {
  const seen = new Map<number, number>();
  for (const d of data) {
    const page = readField(d, selector);
    const v = readField(d, field);
    if ((seen.get(page) ?? v) !== v) return false;
    seen.set(page, v);
  }
  return true;
}

function movingBits(data: readonly Uint8Array[], length: number): Set<number> {
  const flips = flipCounts(data, length);
  return new Set(flips.flatMap((c, i) => (c > 0 ? [i] : [])));
}

/** All detectors over the frames of one message (one id, one payload length). */
export function detectMessage(msg: MessageFrames, options: DetectOptions = {}): IdFindings {
  const { data, length } = msg;
  const findings: IdFindings = {
    id: msg.id,
    extended: msg.extended,
    key: msg.key,
    frames: data.length,
    length,
    byteOrder: 'little_endian',
    constantBits: [],
    counters: [],
    checksums: [],
    fields: [],
    flags: [],
    valueTables: [],
    multiplexers: [],
  };
  const moving = movingBits(data, length);
  findings.constantBits = Array.from({ length: length * 8 }, (_, i) => i).filter((i) => !moving.has(i));
  if (data.length < (options.minFrames ?? 8) || length === 0) return findings;

  const claimed = new Set<number>();
  const claim = (field: FieldRef): void => fieldBits(field).forEach((b) => claimed.add(b));
  const minDistinct = options.minDistinctPayloads ?? MIN_DISTINCT_PAYLOADS;
  const varied = distinctPayloads(data, minDistinct) >= minDistinct;
  findings.checksums = varied ? detectChecksums(msg) : [];
  findings.checksums.forEach((c) => claim(c.field));
  let counters = detectCounters(msg, { excludeBits: claimed });

  const mux = varied
    ? detectMultiplexer(data, length, { excludeBits: claimed, extraCandidates: counters.map((c) => c.field) })
    : undefined;
  if (mux) {
    // A round-robin selector also reads as a counter: the multiplexer explanation wins. So does page
    // content that holds one value per page: it alternates only because the pages do.
    const selBits = new Set(fieldBits(mux.field));
    counters = counters.filter(
      (c) => !fieldBits(c.field).some((b) => selBits.has(b)) && !fixedPerPage(data, mux.field, c.field),
    );
    findings.multiplexers.push(mux);
    claim(mux.field);
  }
  findings.counters = counters;
  counters.forEach((c) => claim(c.field));

  if (!mux) {
    const available = new Set([...moving].filter((b) => !claimed.has(b)));
    const judged = judgeFields(data, length, available, options);
    findings.byteOrder = judged.byteOrder;
    findings.fields = judged.fields;
    findings.flags = judged.flags;
    findings.valueTables = judged.valueTables;
  } else {
    // Bits moving in every group are ordinary signals: segment them over all frames. The rest per group.
    const groupMoving = mux.groups.map((g) => new Set(g.movingBits));
    const shared = new Set([...moving].filter((b) => !claimed.has(b) && groupMoving.every((s) => s.has(b))));
    const common = judgeFields(data, length, shared, options);
    findings.byteOrder = common.byteOrder;
    findings.fields.push(...common.fields);
    findings.flags.push(...common.flags);
    findings.valueTables.push(...common.valueTables);
    for (const g of mux.groups) {
      const groupData = data.filter((d) => readField(d, mux.field) === g.value);
      const own = new Set(g.movingBits.filter((b) => !claimed.has(b) && !shared.has(b)));
      const judged = judgeFields(groupData, length, own, options, g.value);
      findings.fields.push(...judged.fields);
      findings.flags.push(...judged.flags);
      findings.valueTables.push(...judged.valueTables);
    }
  }
  // Single-byte counters, checksums and selectors follow the id's byte order so that a draft DBC reads uniformly.
  const order = findings.byteOrder;
  for (const c of findings.counters) c.field = inByteOrder(c.field, order);
  for (const c of findings.checksums) c.field = inByteOrder(c.field, order);
  for (const m of findings.multiplexers) m.field = inByteOrder(m.field, order);
  for (const f of findings.fields) f.field = inByteOrder(f.field, order);
  for (const f of findings.flags) f.field = inByteOrder(f.field, order);
  for (const v of findings.valueTables) v.field = inByteOrder(v.field, order);
  return findings;
}

/** All detectors over a capture: frames are grouped per id (capture order kept). */
export function detectAll(frames: Iterable<CanFrame>, options: DetectOptions = {}): Findings {
  const ids: IdFindings[] = [];
  for (const list of groupById(frames).values()) ids.push(detectMessage(messageFrames(list), options));
  ids.sort((a, b) => Number(a.extended) - Number(b.extended) || a.id - b.id);
  return { ids };
}

/**
 * Draft signal database from detector findings: one message per id, one signal per accepted
 * claim. Claims on the same bits are resolved by confidence: the higher one wins, a lower one is
 * trimmed to its unclaimed end bits when those stay contiguous, otherwise dropped.
 */
import type { DbcDatabase, DbcMessage, DbcSignal } from '../dbc/model';
import { fieldBits, fieldFromLsb, type FieldRef } from '../analysis/bits';
import type { Findings, IdFindings } from './types';

interface Claim {
  kind: 'checksum' | 'counter' | 'multiplexer' | 'field' | 'flag';
  field: FieldRef;
  confidence: number;
  evidence: string[];
  signed: boolean;
  multiplexerValue?: number;
  valueTable?: Map<number, string>;
  minimum?: number;
  maximum?: number;
  /** Fixed name (placeholders); otherwise one is made from the kind and field. */
  name?: string;
}

const PREFIX: Record<Claim['kind'], string> = {
  checksum: 'CHK',
  counter: 'CNT',
  multiplexer: 'MUX',
  field: 'SIG',
  flag: 'FLAG',
};
/** Tie-break when confidences are equal: structure beats generic fields. */
const RANK: Record<Claim['kind'], number> = { checksum: 5, multiplexer: 4, counter: 3, field: 2, flag: 1 };

function claimsOf(idf: IdFindings): Claim[] {
  const claims: Claim[] = [];
  for (const c of idf.checksums)
    claims.push({
      kind: 'checksum',
      field: c.field,
      confidence: c.confidence,
      evidence: [`${c.variant}`, ...c.evidence],
      signed: false,
    });
  for (const c of idf.counters)
    claims.push({
      kind: 'counter',
      field: c.field,
      confidence: c.confidence,
      evidence: c.evidence,
      signed: false,
    });
  for (const m of idf.multiplexers)
    claims.push({
      kind: 'multiplexer',
      field: m.field,
      confidence: m.confidence,
      evidence: m.evidence,
      signed: false,
    });
  for (const f of idf.fields) {
    const table = idf.valueTables.find(
      (v) =>
        v.multiplexerValue === f.multiplexerValue &&
        v.field.startBit === f.field.startBit &&
        v.field.length === f.field.length &&
        v.field.byteOrder === f.field.byteOrder,
    );
    claims.push({
      kind: 'field',
      field: f.field,
      confidence: f.confidence,
      evidence: [...f.evidence, ...(table ? table.evidence : [])],
      signed: f.signed,
      multiplexerValue: f.multiplexerValue,
      valueTable: table ? new Map(table.values.map((v) => [v.value, `VAL_${v.value}`])) : undefined,
      minimum: f.minRaw,
      maximum: f.maxRaw,
    });
  }
  for (const f of idf.flags)
    claims.push({
      kind: 'flag',
      field: f.field,
      confidence: f.confidence,
      evidence: f.evidence,
      signed: false,
      multiplexerValue: f.multiplexerValue,
    });
  return claims;
}

/** Two claims conflict when they share a bit and can be present in the same frame. */
function conflicts(a: Claim, b: Claim): boolean {
  return (
    a.multiplexerValue === undefined ||
    b.multiplexerValue === undefined ||
    a.multiplexerValue === b.multiplexerValue
  );
}

/** The claim's field with taken bits cut off its ends, or undefined when a taken bit is inside or nothing is left. */
function trim(field: FieldRef, taken: (bit: number) => boolean): FieldRef | undefined {
  const bits = fieldBits(field); // LSB first
  let lo = 0;
  let hi = bits.length - 1;
  while (lo <= hi && taken(bits[lo]!)) lo++;
  while (hi >= lo && taken(bits[hi]!)) hi--;
  if (lo > hi) return undefined;
  for (let k = lo; k <= hi; k++) if (taken(bits[k]!)) return undefined;
  if (lo === 0 && hi === bits.length - 1) return field;
  return fieldFromLsb(bits[lo]!, hi - lo + 1, field.byteOrder);
}

function hexKey(idf: IdFindings): string {
  return idf.key;
}

function signalName(kind: Claim['kind'], idf: IdFindings, field: FieldRef, used: Set<string>): string {
  let name =
    kind === 'checksum' || kind === 'counter' || kind === 'multiplexer'
      ? `${PREFIX[kind]}_${hexKey(idf)}`
      : `${PREFIX[kind]}_${hexKey(idf)}_b${field.startBit}_${field.length}`;
  if (used.has(name)) name = `${PREFIX[kind]}_${hexKey(idf)}_b${field.startBit}_${field.length}`;
  let k = 2;
  const base = name;
  while (used.has(name)) name = `${base}_${k++}`;
  used.add(name);
  return name;
}

/** DBC comment text: evidence lines joined, without characters a DBC string cannot hold. */
function commentText(lines: string[], confidence: number): string {
  return [`confidence ${confidence.toFixed(2)}`, ...lines].join('; ').replace(/["\\]/g, "'");
}

/**
 * A decoder that meets a selector value its DBC does not list stops (cantools raises "expected
 * multiplexer id ..."), so every value the capture showed gets a page: values under which no field
 * was found (too few frames to analyse, or nothing moved) get a raw placeholder over the bits of
 * the widest multiplexed field, which no always-present signal overlaps.
 */
function withEveryPage(accepted: Claim[], idf: IdFindings): Claim[] {
  const mux = idf.multiplexers[0];
  const paged = accepted.filter((c) => c.multiplexerValue !== undefined);
  const widest = paged.sort((a, b) => b.field.length - a.field.length)[0];
  if (!mux || !widest) {
    // A selector without any page content multiplexes nothing: keep it as a plain field.
    return accepted.map((c) => (c.kind === 'multiplexer' ? { ...c, kind: 'field' } : c));
  }
  const values = [...mux.groups, ...mux.rareValues];
  const placeholders = values
    .filter((v) => !paged.some((c) => c.multiplexerValue === v.value))
    .map((v): Claim => ({
      kind: 'field',
      name: `RAW_${idf.key}_m${v.value}`,
      field: widest.field,
      confidence: 0,
      evidence: [
        `selector value ${v.value} in ${v.frames} frames: no field found under it; raw bits so that decoders know the value`,
      ],
      signed: false,
      multiplexerValue: v.value,
    }));
  return [...accepted, ...placeholders];
}

/** Without a selector, page-specific claims would overlap as plain signals: they are dropped. */
function withoutPages(accepted: Claim[], dropped: string[]): Claim[] {
  for (const c of accepted)
    if (c.multiplexerValue !== undefined)
      dropped.push(
        `${c.kind} at bit ${c.field.startBit} len ${c.field.length} (page ${c.multiplexerValue}, no selector)`,
      );
  return accepted.filter((c) => c.multiplexerValue === undefined);
}

export function buildDraftMessage(idf: IdFindings): DbcMessage {
  const claims = claimsOf(idf).sort(
    (a, b) => b.confidence - a.confidence || RANK[b.kind] - RANK[a.kind] || b.field.length - a.field.length,
  );
  const accepted: Claim[] = [];
  const dropped: string[] = [];
  for (const claim of claims) {
    const rivals = accepted.filter((a) => conflicts(a, claim));
    const takenBits = new Set(rivals.flatMap((r) => fieldBits(r.field)));
    const field = trim(claim.field, (b) => takenBits.has(b));
    if (!field) {
      dropped.push(`${claim.kind} at bit ${claim.field.startBit} len ${claim.field.length}`);
      continue;
    }
    if (field !== claim.field)
      claim.evidence = [
        ...claim.evidence,
        `trimmed from bit ${claim.field.startBit} len ${claim.field.length} by a more confident claim`,
      ];
    accepted.push({
      ...claim,
      field,
      ...(field !== claim.field ? { minimum: undefined, maximum: undefined, valueTable: undefined } : {}),
    });
  }
  const hasMux = accepted.some((c) => c.kind === 'multiplexer');
  const final = hasMux ? withEveryPage(accepted, idf) : withoutPages(accepted, dropped);
  const used = new Set<string>();
  const signals: DbcSignal[] = final
    .sort((a, b) => fieldBits(a.field)[0]! - fieldBits(b.field)[0]!)
    .map((c) => {
      const full = c.signed
        ? { min: -(2 ** (c.field.length - 1)), max: 2 ** (c.field.length - 1) - 1 }
        : { min: 0, max: 2 ** c.field.length - 1 };
      const signal: DbcSignal = {
        name: c.name ?? signalName(c.kind, idf, c.field, used),
        startBit: c.field.startBit,
        length: c.field.length,
        byteOrder: c.field.byteOrder,
        signed: c.signed,
        valueType: 'integer',
        factor: 1,
        offset: 0,
        minimum: c.minimum ?? full.min,
        maximum: c.maximum ?? full.max,
        unit: '',
        receivers: ['Vector__XXX'],
        isMultiplexer: c.kind === 'multiplexer',
        comment: commentText(c.evidence, c.confidence),
        attributes: {},
      };
      if (c.multiplexerValue !== undefined) signal.multiplexerValue = c.multiplexerValue;
      if (c.valueTable) signal.valueTable = c.valueTable;
      return signal;
    });
  return {
    id: idf.id,
    extended: idf.extended,
    name: `MSG_${idf.key}`,
    length: idf.length,
    sender: 'Vector__XXX',
    signals,
    comment: commentText(
      [
        `${idf.frames} frames analysed, ${idf.byteOrder === 'little_endian' ? 'Intel' : 'Motorola'} byte order`,
        ...(dropped.length ? [`dropped overlapping claims: ${dropped.join(', ')}`] : []),
      ],
      1,
    ),
    attributes: {},
  };
}

/** A draft database with one message per id that has at least one frame. */
export function buildDraftDbc(findings: Findings): DbcDatabase {
  return {
    version: '',
    newSymbols: [],
    bitTiming: '',
    nodes: [],
    valueTables: new Map(),
    messages: findings.ids.filter((f) => f.length > 0).map(buildDraftMessage),
    comment:
      'Draft generated by canlab detect from frame statistics alone; names and scaling are placeholders.',
    attributeDefinitions: [],
    attributes: {},
  };
}

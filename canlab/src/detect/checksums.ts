/**
 * Checksum detection. For every byte (8-bit checksums) and every nibble (4-bit checksums) of a
 * message, tries to explain its value from the other bytes or nibbles with: XOR, additive sums
 * modulo 256 with a constant (which covers sums including id bytes, Tesla style, and Toyota's
 * id bytes + length), negated sums, CRC-8 SAE J1850 and AUTOSAR 8H2F (optionally with a data-id
 * byte appended or prepended, searched over 0..255), and nibble sums (Honda style).
 */
import { fieldBits, fieldFromLsb } from '../analysis/bits';
import { CRC8_ALGORITHMS, crc8, crc8Update, idBytes, idNibbleSum, nibbleOf, type Crc8Params } from './crc';
import { flipCounts, type MessageFrames } from './frames';
import type { ChecksumAlgorithm, ChecksumCandidate } from './types';

export interface ChecksumOptions {
  /** Share of frames that must satisfy the rule. Default 0.98. */
  minMatchRate?: number;
  /** Smallest number of frames to try at all. Default 8. */
  minFrames?: number;
}

/** Value that occurs most often and its share. */
function modeShare(values: ArrayLike<number>): { value: number; share: number } {
  const counts = new Map<number, number>();
  let best = 0;
  let bestN = 0;
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    const n = (counts.get(v) ?? 0) + 1;
    counts.set(v, n);
    if (n > bestN) {
      bestN = n;
      best = v;
    }
  }
  return { value: best, share: values.length ? bestN / values.length : 0 };
}

function distinctCount(values: Iterable<number>): number {
  return new Set(values).size;
}

function hex2(v: number): string {
  return `0x${v.toString(16).toUpperCase().padStart(2, '0')}`;
}

interface Match {
  algorithm: ChecksumAlgorithm;
  variant: string;
  constant: number;
  dataId?: number;
  dataIdPlacement?: 'append' | 'prepend';
  matchRate: number;
  /** Prior strength of the algorithm as evidence (CRCs are unlikely to match by chance). */
  strength: number;
  /** A sum whose constant is the id bytes (Tesla) or id bytes + length (Toyota): a 1-in-128 chance otherwise. */
  idDerived?: boolean;
}

function sumVariant(k: number, idSum: number, length: number): string {
  if (k === 0) return 'sum';
  if (k === (idSum & 0xff)) return 'sum+id bytes (Tesla style)';
  if (k === ((idSum + length) & 0xff)) return 'toyota (id bytes + length + data)';
  return `sum+${hex2(k)}`;
}

function tryByteChecksums(msg: MessageFrames, pos: number, minRate: number): Match[] {
  const { data, length } = msg;
  const n = data.length;
  const covered: number[] = [];
  for (let i = 0; i < length; i++) if (i !== pos) covered.push(i);
  const xorC = new Uint8Array(n);
  const sumC = new Uint8Array(n);
  const negC = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const d = data[t]!;
    let x = 0;
    let s = 0;
    for (const i of covered) {
      x ^= d[i]!;
      s += d[i]!;
    }
    const c = d[pos]!;
    xorC[t] = c ^ x;
    sumC[t] = (c - s) & 0xff;
    negC[t] = (c + s) & 0xff;
  }
  const out: Match[] = [];
  const idSum = idBytes(msg.id, msg.extended).reduce((a, b) => a + b, 0);
  const xm = modeShare(xorC);
  if (xm.share >= minRate)
    out.push({
      algorithm: 'xor8',
      variant: xm.value === 0 ? 'xor' : `xor^${hex2(xm.value)}`,
      constant: xm.value,
      matchRate: xm.share,
      strength: 0.9,
    });
  const sm = modeShare(sumC);
  if (sm.share >= minRate)
    out.push({
      algorithm: 'sum8',
      variant: sumVariant(sm.value, idSum, length),
      constant: sm.value,
      matchRate: sm.share,
      strength: 0.9,
      idDerived: sm.value === (idSum & 0xff) || sm.value === ((idSum + length) & 0xff),
    });
  const nm = modeShare(negC);
  if (nm.share >= minRate) {
    const variant =
      nm.value === 0
        ? "two's complement sum"
        : nm.value === 0xff
          ? 'inverted sum (~sum)'
          : `${hex2(nm.value)}-sum`;
    out.push({ algorithm: 'negsum8', variant, constant: nm.value, matchRate: nm.share, strength: 0.9 });
  }
  for (const params of CRC8_ALGORITHMS) {
    const m = tryCrc(msg, pos, covered, params, minRate);
    if (m) out.push(m);
  }
  return out;
}

function tryCrc(
  msg: MessageFrames,
  pos: number,
  covered: number[],
  params: Crc8Params,
  minRate: number,
): Match | undefined {
  const { data } = msg;
  const n = data.length;
  // Plain CRC, and the register state after the data for the appended data-id search.
  const states = new Uint8Array(n);
  let plain = 0;
  for (let t = 0; t < n; t++) {
    const d = data[t]!;
    states[t] = crc8Update(params, params.init, d, covered);
    if ((states[t]! ^ params.xorOut) === d[pos]) plain++;
  }
  if (plain / n >= minRate)
    return {
      algorithm: params.name,
      variant: `${params.name}`,
      constant: 0,
      matchRate: plain / n,
      strength: 1,
    };
  // Appended data id: final = table[state ^ id] ^ xorOut. Invert the table to read the id off each frame.
  const inverse = new Int16Array(256).fill(-1);
  for (let i = 0; i < 256; i++) inverse[params.table[i]!] = i;
  const ids = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const pre = inverse[data[t]![pos]! ^ params.xorOut]!;
    ids[t] = pre < 0 ? 0 : (pre ^ states[t]!) & 0xff;
  }
  const app = modeShare(ids);
  if (app.share >= minRate) {
    return {
      algorithm: params.name,
      variant: `${params.name} + data id ${hex2(app.value)} appended`,
      constant: 0,
      dataId: app.value,
      dataIdPlacement: 'append',
      matchRate: app.share,
      strength: 1,
    };
  }
  // Prepended data id: screen all 256 ids on the first frames, then verify survivors on all frames.
  const screen = Math.min(n, 12);
  for (let id = 0; id < 256; id++) {
    let ok = 0;
    for (let t = 0; t < screen; t++)
      if (crc8(params, data[t]!, covered, id, 'prepend') === data[t]![pos]) ok++;
    if (ok < screen - 1) continue;
    let all = 0;
    for (let t = 0; t < n; t++) if (crc8(params, data[t]!, covered, id, 'prepend') === data[t]![pos]) all++;
    if (all / n >= minRate) {
      return {
        algorithm: params.name,
        variant: `${params.name} + data id ${hex2(id)} prepended`,
        constant: 0,
        dataId: id,
        dataIdPlacement: 'prepend',
        matchRate: all / n,
        strength: 1,
      };
    }
  }
  return undefined;
}

function tryNibbleChecksums(msg: MessageFrames, nib: number, minRate: number): Match[] {
  const { data, length } = msg;
  const n = data.length;
  const plus = new Uint8Array(n);
  const minus = new Uint8Array(n);
  for (let t = 0; t < n; t++) {
    const d = data[t]!;
    let s = 0;
    for (let j = 0; j < length * 2; j++) if (j !== nib) s += nibbleOf(d, j);
    const c = nibbleOf(d, nib);
    plus[t] = (c - s) & 0xf;
    minus[t] = (c + s) & 0xf;
  }
  const out: Match[] = [];
  const pm = modeShare(plus);
  if (pm.share >= minRate)
    out.push({
      algorithm: 'nibble_sum',
      variant: pm.value === 0 ? 'nibble sum' : `nibble sum + ${pm.value}`,
      constant: pm.value,
      matchRate: pm.share,
      strength: 0.85,
    });
  const mm = modeShare(minus);
  if (mm.share >= minRate) {
    const honda = (8 - idNibbleSum(msg.id)) & 0xf;
    const variant = mm.value === honda ? 'honda (8 - nibble sum of id and data)' : `${mm.value} - nibble sum`;
    out.push({
      algorithm: 'nibble_negsum',
      variant,
      constant: mm.value,
      matchRate: mm.share,
      strength: 0.85,
    });
  }
  return out;
}

/** Checksums of one id's frames, best first; at most one per byte or nibble position. */
export function detectChecksums(msg: MessageFrames, options: ChecksumOptions = {}): ChecksumCandidate[] {
  const minRate = options.minMatchRate ?? 0.98;
  const { data, length } = msg;
  const n = data.length;
  if (n < (options.minFrames ?? 8) || length < 2) return [];
  const byteVaries = Array.from({ length }, (_, i) => distinctCount(data.map((d) => d[i]!)) > 1);
  const out: ChecksumCandidate[] = [];
  for (let pos = 0; pos < length; pos++) {
    const distinct = distinctCount(data.map((d) => d[pos]!));
    if (distinct < 4) continue;
    const varyingOthers = byteVaries.filter((v, i) => v && i !== pos).length;
    // With one other byte varying, a sum, XOR or copy all read as a fixed function of it: only a CRC or a
    // constant derived from the id (the scheme's signature, a 1-in-128 coincidence otherwise) tells a checksum.
    const matches = tryByteChecksums(msg, pos, minRate).filter(
      (m) => m.strength === 1 || m.idDerived === true || varyingOthers >= 2,
    );
    if (varyingOthers < 1) continue;
    const best = matches.sort((a, b) => b.matchRate * b.strength - a.matchRate * a.strength)[0];
    if (!best) continue;
    const chance = Math.min(1, n / 256 ** Math.min(4, Math.log2(distinct)));
    out.push({
      kind: 'checksum',
      field: fieldFromLsb(pos * 8, 8, 'little_endian'),
      algorithm: best.algorithm,
      variant: best.variant,
      constant: best.constant,
      dataId: best.dataId,
      dataIdPlacement: best.dataIdPlacement,
      coveredBytes: Array.from({ length }, (_, i) => i).filter((i) => i !== pos),
      matchRate: best.matchRate,
      confidence: Math.max(
        0,
        Math.min(1, best.matchRate * best.strength * (1 - chance) * (1 - 1 / distinct)),
      ),
      evidence: [
        `byte ${pos} = ${best.variant} of bytes ${pos === 0 ? '' : `0-${pos - 1}`}${pos > 0 && pos < length - 1 ? ',' : ''}${pos < length - 1 ? `${pos + 1}-${length - 1}` : ''} in ${(best.matchRate * 100).toFixed(1)}% of ${n} frames`,
        `checksum byte takes ${distinct} distinct values; ${varyingOthers} other bytes vary`,
        ...(matches.length > 1
          ? [
              `also consistent: ${matches
                .slice(1)
                .map((m) => m.variant)
                .join(', ')}`,
            ]
          : []),
      ],
    });
  }
  const nibbleVaries = Array.from(
    { length: length * 2 },
    (_, j) => distinctCount(data.map((d) => nibbleOf(d, j))) > 1,
  );
  for (let nib = 0; nib < length * 2; nib++) {
    const byte = nib >> 1;
    if (
      out.some(
        (c) =>
          c.field.length === 8 &&
          c.field.startBit >> 3 === byte &&
          c.algorithm !== 'xor8' &&
          c.algorithm !== 'negsum8',
      )
    )
      continue;
    const distinct = distinctCount(data.map((d) => nibbleOf(d, nib)));
    if (distinct < 4) continue;
    const varyingOthers = nibbleVaries.filter((v, j) => v && j !== nib).length;
    if (varyingOthers < 2) continue;
    const matches = tryNibbleChecksums(msg, nib, minRate);
    const best = matches.sort((a, b) => b.matchRate - a.matchRate)[0];
    if (!best) continue;
    out.push({
      kind: 'checksum',
      field: fieldFromLsb(nib * 4, 4, 'little_endian'),
      algorithm: best.algorithm,
      variant: best.variant,
      constant: best.constant,
      coveredBytes: Array.from({ length }, (_, i) => i),
      matchRate: best.matchRate,
      confidence: Math.max(0, Math.min(1, best.matchRate * best.strength * (1 - 1 / distinct))),
      evidence: [
        `nibble ${nib} (byte ${byte} ${nib & 1 ? 'high' : 'low'}) = ${best.variant} of the other ${length * 2 - 1} nibbles in ${(best.matchRate * 100).toFixed(1)}% of ${n} frames`,
        `checksum nibble takes ${distinct} distinct values; ${varyingOthers} other nibbles vary`,
      ],
    });
  }
  return resolveSymmetric(out, msg).sort((a, b) => b.confidence - a.confidence);
}

/** How much a field's bits look like coin flips: 1 when every bit flips in half the frame pairs. */
function randomness(msg: MessageFrames, c: ChecksumCandidate): number {
  const flips = flipCounts(msg.data, msg.length);
  const bits = fieldBits(c.field);
  let s = 0;
  for (const b of bits) s += 1 - Math.abs(2 * (flips[b]! / Math.max(1, msg.data.length - 1)) - 1);
  return s / bits.length;
}

/**
 * XOR, "constant minus sum" and Honda-style nibble checksums are symmetric: when one byte (nibble)
 * is the XOR of the others, every byte is. A plain sum is not, but holds at two positions p and q
 * whenever the bytes other than p and q barely change (then byte q is byte p minus a constant), as
 * when a message carries only a counter and its checksum. Keep one position per such rule: the one
 * that satisfies it in the most frames, then the one whose bits look most random (checksum bits flip
 * like coins; data bits do not), ties to the last, then the first.
 */
function resolveSymmetric(found: ChecksumCandidate[], msg: MessageFrames): ChecksumCandidate[] {
  const symmetric = new Set<ChecksumAlgorithm>(['xor8', 'negsum8', 'nibble_negsum', 'sum8']);
  const keep: ChecksumCandidate[] = found.filter((c) => !symmetric.has(c.algorithm));
  const families = new Map<string, ChecksumCandidate[]>();
  for (const c of found) {
    if (!symmetric.has(c.algorithm)) continue;
    // Sums at two positions differ in their constants (by the sum of the bytes that stay put).
    const key = c.algorithm === 'sum8' ? c.algorithm : `${c.algorithm}:${c.constant}`;
    families.set(key, [...(families.get(key) ?? []), c]);
  }
  const lastStart = (c: ChecksumCandidate): number => fieldBits(c.field)[0]!;
  for (const list of families.values()) {
    const scored = list.map((c) => ({ c, r: randomness(msg, c) }));
    scored.sort((a, b) => b.c.matchRate - a.c.matchRate || b.r - a.r || lastStart(b.c) - lastStart(a.c));
    const top = scored[0]!;
    if (list.length > 1) {
      const why =
        top.c.algorithm === 'sum8'
          ? 'the sum holds there because the other bytes barely change'
          : 'the rule is symmetric';
      top.c.evidence.push(
        `${why} (${list.length} positions satisfy it); this one satisfies it in the most frames (${(top.c.matchRate * 100).toFixed(1)}% vs ${(scored[1]!.c.matchRate * 100).toFixed(1)}%) and its bits flip most like a checksum's (randomness ${top.r.toFixed(2)} vs ${scored[1]!.r.toFixed(2)})`,
      );
      top.c.confidence *= Math.min(1, 0.6 + (top.r - scored[1]!.r));
    }
    keep.push(top.c);
  }
  // No two results on the same bits.
  keep.sort((a, b) => b.confidence - a.confidence);
  const used = new Set<number>();
  return keep.filter((c) => {
    const bits = fieldBits(c.field);
    if (bits.some((b) => used.has(b))) return false;
    bits.forEach((b) => used.add(b));
    return true;
  });
}

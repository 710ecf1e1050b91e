/**
 * Bit numbering shared by the analysis and the detectors. Positions are DBC bit indices
 * (`byte * 8 + bitInByte`, bit 0 = least significant bit of byte 0), the numbering a DBC start bit
 * uses for both byte orders.
 *
 * A little-endian (Intel) field is contiguous in that numbering, least significant bit first.
 * A big-endian (Motorola) field is contiguous in the "MSB-first" numbering
 * `p = byte * 8 + 7 - bitInByte`, most significant bit first; its DBC start bit is its MSB.
 */
import type { ByteOrder } from '../dbc/model';

/** A field of the payload as a DBC signal would place it. */
export interface FieldRef {
  /** DBC start bit: LSB for little endian, MSB (sawtooth numbering) for big endian. */
  startBit: number;
  length: number;
  byteOrder: ByteOrder;
}

/** Converts between DBC bit index and MSB-first position (the mapping is its own inverse). */
export function msbFirst(index: number): number {
  return (index & ~7) + 7 - (index & 7);
}

/** DBC bit indices of a field, from its least significant bit (value bit 0) upwards. */
export function fieldBits(field: FieldRef): number[] {
  const out: number[] = [];
  if (field.byteOrder === 'little_endian') {
    for (let k = 0; k < field.length; k++) out.push(field.startBit + k);
  } else {
    const p0 = msbFirst(field.startBit);
    for (let k = field.length - 1; k >= 0; k--) out.push(msbFirst(p0 + k));
  }
  return out;
}

/** Bit set of a field as a sorted, comma-joined key (for comparing fields regardless of byte order). */
export function bitSetKey(field: FieldRef): string {
  return fieldBits(field)
    .sort((a, b) => a - b)
    .join(',');
}

/** Number of payload bytes a field touches. */
export function bytesSpanned(field: FieldRef): number {
  return new Set(fieldBits(field).map((b) => b >> 3)).size;
}

/** Highest DBC bit index a field uses, plus one: the payload must be at least this many bits. */
export function fieldEnd(field: FieldRef): number {
  return Math.max(...fieldBits(field)) + 1;
}

/** Field given its least significant bit and width in the byte order's contiguous numbering. */
export function fieldFromLsb(lsbIndex: number, length: number, byteOrder: ByteOrder): FieldRef {
  if (byteOrder === 'little_endian') return { startBit: lsbIndex, length, byteOrder };
  const pLsb = msbFirst(lsbIndex);
  return { startBit: msbFirst(pLsb - length + 1), length, byteOrder };
}

/** Unsigned raw value of a field (up to 53 bits exactly). Bits beyond the payload read as 0. */
export function readField(data: Uint8Array, field: FieldRef): number {
  const bits = fieldBits(field);
  let v = 0;
  let scale = 1;
  for (const b of bits) {
    const byte = data[b >> 3] ?? 0;
    if ((byte >> (b & 7)) & 1) v += scale;
    scale *= 2;
  }
  return v;
}

/** Two's-complement reinterpretation of an unsigned raw value of `length` bits. */
export function toSigned(value: number, length: number): number {
  const half = 2 ** (length - 1);
  return value >= half ? value - 2 * half : value;
}

/** Writes an unsigned raw value into a field (used by tests and the evaluator's generator). */
export function writeField(data: Uint8Array, field: FieldRef, raw: number): void {
  const bits = fieldBits(field);
  let v = raw < 0 ? raw + 2 ** field.length : raw;
  for (const b of bits) {
    const bit = v % 2;
    v = Math.floor(v / 2);
    const i = b >> 3;
    if (i >= data.length) continue;
    if (bit) data[i] = data[i]! | (1 << (b & 7));
    else data[i] = data[i]! & ~(1 << (b & 7));
  }
}

/** `0x123` for standard ids, `0x12345678x` style 8-digit for extended ids (the suffix marks them). */
export function formatId(id: number, extended: boolean): string {
  return extended
    ? `0x${id.toString(16).toUpperCase().padStart(8, '0')}x`
    : `0x${id.toString(16).toUpperCase().padStart(3, '0')}`;
}

/** Human name of a field for evidence lines: `b8+16 LE`. */
export function describeField(field: FieldRef): string {
  return `bit ${field.startBit} len ${field.length} ${field.byteOrder === 'little_endian' ? 'LE(Intel)' : 'BE(Motorola)'}`;
}

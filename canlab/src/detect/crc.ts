/** Checksum algorithms the checksum detector tries, and the evaluator uses to generate captures. */

function crc8Table(poly: number): Uint8Array {
  const table = new Uint8Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 0x80 ? ((c << 1) ^ poly) & 0xff : (c << 1) & 0xff;
    table[i] = c;
  }
  return table;
}

export interface Crc8Params {
  name: 'crc8_sae_j1850' | 'crc8_autosar_8h2f';
  poly: number;
  init: number;
  xorOut: number;
  table: Uint8Array;
}

/** SAE J1850: poly 0x1D, init 0xFF, xorout 0xFF (check value of "123456789" is 0x4B). */
export const CRC8_SAE_J1850: Crc8Params = {
  name: 'crc8_sae_j1850',
  poly: 0x1d,
  init: 0xff,
  xorOut: 0xff,
  table: crc8Table(0x1d),
};
/** AUTOSAR CRC8H2F: poly 0x2F, init 0xFF, xorout 0xFF (check value of "123456789" is 0xDF). */
export const CRC8_AUTOSAR_8H2F: Crc8Params = {
  name: 'crc8_autosar_8h2f',
  poly: 0x2f,
  init: 0xff,
  xorOut: 0xff,
  table: crc8Table(0x2f),
};
export const CRC8_ALGORITHMS: readonly Crc8Params[] = [CRC8_SAE_J1850, CRC8_AUTOSAR_8H2F];

/** CRC register after feeding `bytes[i]` for each i in `indices`, starting from `state` (no final XOR). */
export function crc8Update(
  params: Crc8Params,
  state: number,
  bytes: Uint8Array,
  indices: readonly number[],
): number {
  let c = state;
  for (const i of indices) c = params.table[c ^ bytes[i]!]!;
  return c;
}

export function crc8(
  params: Crc8Params,
  bytes: Uint8Array,
  indices: readonly number[],
  dataId?: number,
  placement?: 'append' | 'prepend',
): number {
  let c = params.init;
  if (dataId !== undefined && placement === 'prepend') c = params.table[c ^ dataId]!;
  c = crc8Update(params, c, bytes, indices);
  if (dataId !== undefined && placement === 'append') c = params.table[c ^ dataId]!;
  return c ^ params.xorOut;
}

/** Bytes of an arbitration id, most significant first: 2 for standard ids, 4 for extended ones. */
export function idBytes(id: number, extended: boolean): number[] {
  return extended
    ? [(id >>> 24) & 0xff, (id >>> 16) & 0xff, (id >>> 8) & 0xff, id & 0xff]
    : [(id >>> 8) & 0xff, id & 0xff];
}

/** Hex digits (nibbles) of an arbitration id as Honda's checksum sums them. */
export function idNibbleSum(id: number): number {
  let s = 0;
  let x = id;
  while (x > 0) {
    s += x & 0xf;
    x = Math.floor(x / 16);
  }
  return s;
}

/** Nibble index n: byte n>>1, low nibble when n is even. */
export function nibbleOf(data: Uint8Array, n: number): number {
  const b = data[n >> 1]!;
  return n & 1 ? b >> 4 : b & 0xf;
}

/**
 * 64-bit perceptual hash (DCT pHash): the signs of the lowest 8×8 DCT coefficients of a 32×32 grey
 * image relative to their median. Near-duplicate frames (a car waiting at a light) differ in a few
 * bits; frames of a moving scene differ in many.
 */
export const PHASH_SIDE = 32;
const LOW = 8;

const COS: Float64Array = (() => {
  const table = new Float64Array(PHASH_SIDE * PHASH_SIDE);
  for (let k = 0; k < PHASH_SIDE; k++) {
    for (let n = 0; n < PHASH_SIDE; n++)
      table[k * PHASH_SIDE + n] = Math.cos(((2 * n + 1) * k * Math.PI) / (2 * PHASH_SIDE));
  }
  return table;
})();

/** `gray` holds 32×32 luminance values, row-major. Returns 16 hex digits. */
export function perceptualHash(gray: ArrayLike<number>): string {
  if (gray.length !== PHASH_SIDE * PHASH_SIDE)
    throw new Error(`perceptualHash needs ${PHASH_SIDE}×${PHASH_SIDE} pixels, got ${gray.length}`);
  // Separable DCT-II, only the LOW×LOW corner is needed: rows first, then columns.
  const rows = new Float64Array(PHASH_SIDE * LOW);
  for (let y = 0; y < PHASH_SIDE; y++) {
    for (let u = 0; u < LOW; u++) {
      let sum = 0;
      for (let x = 0; x < PHASH_SIDE; x++) sum += gray[y * PHASH_SIDE + x]! * COS[u * PHASH_SIDE + x]!;
      rows[y * LOW + u] = sum;
    }
  }
  const coeffs = new Float64Array(LOW * LOW);
  for (let v = 0; v < LOW; v++) {
    for (let u = 0; u < LOW; u++) {
      let sum = 0;
      for (let y = 0; y < PHASH_SIDE; y++) sum += rows[y * LOW + u]! * COS[v * PHASH_SIDE + y]!;
      coeffs[v * LOW + u] = sum;
    }
  }
  // The DC term carries only overall brightness; leave it out of the median.
  const sorted = Array.from(coeffs.subarray(1)).sort((a, b) => a - b);
  const median = (sorted[31]! + sorted[32]!) / 2;
  let hash = 0n;
  for (let i = 0; i < LOW * LOW; i++) hash = (hash << 1n) | (coeffs[i]! > median ? 1n : 0n);
  return hash.toString(16).padStart(16, '0');
}

export function hammingDistance(a: string, b: string): number {
  let x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let bits = 0;
  while (x) {
    x &= x - 1n;
    bits++;
  }
  return bits;
}

/**
 * Marks each frame that is a near-duplicate of the last frame kept before it (so a slow drift
 * still yields a new frame once it has moved far enough from the last kept one).
 */
export function markNearDuplicates(hashes: readonly string[], maxDistance: number): boolean[] {
  let reference: string | undefined;
  return hashes.map((hash) => {
    if (reference !== undefined && hammingDistance(hash, reference) <= maxDistance) return true;
    reference = hash;
    return false;
  });
}

/**
 * MFA recovery codes and how a second-factor code is told apart (docs/identity.md). Pure: the
 * caller supplies the random bytes and stores only hashes.
 */

/** Codes issued when MFA is turned on; each works once. */
export const RECOVERY_CODE_COUNT = 10;

/** Characters per code: 12 × 5 bits = 60 bits of entropy, shown as `xxxx-xxxx-xxxx`. */
export const RECOVERY_CODE_LENGTH = 12;

/** Crockford's base32 alphabet: no i, l, o or u, so a code read aloud or copied by hand survives. */
const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz';

/** Letters people type for the digits Crockford's alphabet leaves out. */
const LOOK_ALIKES: Record<string, string> = { o: '0', i: '1', l: '1' };

/** A recovery code from `RECOVERY_CODE_LENGTH` random bytes (each byte's low 5 bits: uniform over 32). */
export function formatRecoveryCode(bytes: Uint8Array): string {
  if (bytes.length < RECOVERY_CODE_LENGTH)
    throw new Error(`a recovery code needs ${RECOVERY_CODE_LENGTH} random bytes`);
  const chars = [...bytes.subarray(0, RECOVERY_CODE_LENGTH)].map((b) => ALPHABET[b & 31]!);
  return [0, 4, 8].map((i) => chars.slice(i, i + 4).join('')).join('-');
}

/** A second-factor code as the user typed it: a TOTP code, a recovery code (normalised), or neither. */
export type SecondFactorCode = { kind: 'totp'; code: string } | { kind: 'recovery'; code: string } | null;

export function classifySecondFactor(input: string): SecondFactorCode {
  const compact = input.replace(/[\s-]/g, '').toLowerCase();
  if (/^\d{6}$/.test(compact)) return { kind: 'totp', code: compact };
  const normalised = [...compact].map((c) => LOOK_ALIKES[c] ?? c).join('');
  if (normalised.length === RECOVERY_CODE_LENGTH && [...normalised].every((c) => ALPHABET.includes(c)))
    return { kind: 'recovery', code: normalised };
  return null;
}

import { createHash, randomBytes } from 'node:crypto';

/**
 * High-entropy single-use tokens (password resets, invitations): 256 random bits, shown once and
 * stored as their SHA-256. A slow hash adds nothing at this entropy, and a fast one lets the row be
 * found by the hash alone.
 */
export function newSecretToken(): { token: string; hash: string } {
  const token = randomBytes(32).toString('base64url');
  return { token, hash: hashSecretToken(token) };
}

export const hashSecretToken = (token: string): string => createHash('sha256').update(token).digest('hex');

import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * Secrets the platform must read back — TOTP secrets, webhook signing secrets, source credentials —
 * are kept sealed with AES-256-GCM under a key derived from `auth.sealingKey`: a database dump alone
 * does not reveal them, and a tampered value fails to open instead of being used. Format:
 * `v1.<iv>.<tag>.<ciphertext>`, each base64url.
 */
const keyOf = (material: string) => createHash('sha256').update(`drivelab sealed v1\0${material}`).digest();

export function sealSecret(material: string, plaintext: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(material), iv);
  const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  return ['v1', iv, cipher.getAuthTag(), body]
    .map((p) => (typeof p === 'string' ? p : p.toString('base64url')))
    .join('.');
}

export function openSecret(material: string, sealed: string): string {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) throw new Error('not a sealed secret');
  const decipher = createDecipheriv('aes-256-gcm', keyOf(material), Buffer.from(iv, 'base64url'));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
}

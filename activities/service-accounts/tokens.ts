import { createHash, randomBytes } from 'node:crypto';

/**
 * Service-account tokens (docs/service-accounts.md): `dls_` and 43 base64url characters, 256 random
 * bits. The prefix tells them apart from the JWTs of sign-ins at a glance (and to a secret scanner);
 * the entropy makes one sha256 enough to store them: only the hash is kept, the token is shown once.
 */
export const SERVICE_TOKEN_PREFIX = 'dls_';

/** Characters of a token kept beside its hash, so an admin can tell tokens apart in lists and logs. */
const SHOWN_CHARS = SERVICE_TOKEN_PREFIX.length + 8;

const SHAPE = /^dls_[A-Za-z0-9_-]{43}$/;

export const isServiceAccountToken = (token: string): boolean => token.startsWith(SERVICE_TOKEN_PREFIX);

/** Only a well-formed token is looked up; anything else is refused without a query. */
export const isWellFormedServiceToken = (token: string): boolean => SHAPE.test(token);

export const hashServiceToken = (token: string): string => createHash('sha256').update(token).digest('hex');

export function newServiceToken(): { token: string; hash: string; prefix: string } {
  const token = `${SERVICE_TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { token, hash: hashServiceToken(token), prefix: token.slice(0, SHOWN_CHARS) };
}

import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { NotAuthenticatedError } from '../../core/errors';

/**
 * Bearer tokens: HS256 JWTs carrying the user id (`sub`) and the user's token_version (`tv`).
 * Role is not trusted from the token: it is read from the user row on every request, so a role
 * change or a revoke (token_version bump) takes effect at once. Format documented in docs/api.md.
 */
export interface TokenClaims {
  userId: string;
  tokenVersion: number;
  tokenId: string;
  expiresAt: Date;
}

export interface TokenIssuer {
  issue(userId: string, tokenVersion: number): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<TokenClaims>;
}

export function createTokenIssuer(opts: {
  secret: string;
  issuer: string;
  ttlHours: number;
  now?: () => Date;
}): TokenIssuer {
  const key = new TextEncoder().encode(opts.secret);
  const now = opts.now ?? (() => new Date());
  return {
    async issue(userId, tokenVersion) {
      const issuedAt = Math.floor(now().getTime() / 1000);
      const exp = issuedAt + Math.round(opts.ttlHours * 3600);
      const token = await new SignJWT({ tv: tokenVersion })
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setSubject(userId)
        .setIssuer(opts.issuer)
        .setIssuedAt(issuedAt)
        .setExpirationTime(exp)
        .setJti(randomUUID())
        .sign(key);
      return { token, expiresAt: new Date(exp * 1000) };
    },
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, key, {
          issuer: opts.issuer,
          algorithms: ['HS256'],
          currentDate: now(),
        });
        if (
          typeof payload.sub !== 'string' ||
          typeof payload.tv !== 'number' ||
          typeof payload.exp !== 'number'
        ) {
          throw new NotAuthenticatedError('token lacks its claims');
        }
        return {
          userId: payload.sub,
          tokenVersion: payload.tv,
          tokenId: payload.jti ?? '',
          expiresAt: new Date(payload.exp * 1000),
        };
      } catch (err) {
        if (err instanceof NotAuthenticatedError) throw err;
        if (err instanceof joseErrors.JWTExpired)
          throw new NotAuthenticatedError('token expired; sign in again or refresh before expiry');
        throw new NotAuthenticatedError('token is not valid');
      }
    },
  };
}

import { randomUUID } from 'node:crypto';
import { SignJWT, errors as joseErrors, jwtVerify } from 'jose';
import { NotAuthenticatedError } from '../../core/errors';

/**
 * Bearer tokens: HS256 JWTs carrying the user id (`sub`) and the user's token_version (`tv`).
 * Role is not trusted from the token: it is read from the user row on every request, so a role
 * change or a revoke (token_version bump) takes effect at once. Format documented in docs/api.md.
 */
/** `api`: a bearer token for every route its role allows. `media`: reads frame images and crops only. */
export type TokenScope = 'api' | 'media';

export interface TokenClaims {
  userId: string;
  tokenVersion: number;
  /** The sign-in session (`sid`) the token belongs to; absent on tokens minted outside a sign-in. */
  sessionId: string | null;
  tokenId: string;
  expiresAt: Date;
  scope: TokenScope;
}

export interface TokenIssuer {
  issue(
    userId: string,
    tokenVersion: number,
    sessionId?: string | null,
  ): Promise<{ token: string; expiresAt: Date }>;
  /** A short-lived token scoped to reading frame images and object crops (so `<img>` needs no header). */
  issueMedia(userId: string, tokenVersion: number): Promise<{ token: string; expiresAt: Date }>;
  verify(token: string): Promise<TokenClaims>;
}

export function createTokenIssuer(opts: {
  secret: string;
  issuer: string;
  ttlHours: number;
  mediaTtlMinutes?: number;
  now?: () => Date;
}): TokenIssuer {
  const key = new TextEncoder().encode(opts.secret);
  const now = opts.now ?? (() => new Date());
  const sign = async (
    userId: string,
    tokenVersion: number,
    ttlSeconds: number,
    scope: TokenScope,
    sessionId: string | null | undefined,
  ) => {
    const issuedAt = Math.floor(now().getTime() / 1000);
    const exp = issuedAt + Math.round(ttlSeconds);
    const claims = {
      tv: tokenVersion,
      ...(scope === 'media' ? { scope } : {}),
      ...(sessionId ? { sid: sessionId } : {}),
    };
    const token = await new SignJWT(claims)
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .setSubject(userId)
      .setIssuer(opts.issuer)
      .setIssuedAt(issuedAt)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(key);
    return { token, expiresAt: new Date(exp * 1000) };
  };
  return {
    issue: (userId, tokenVersion, sessionId) =>
      sign(userId, tokenVersion, opts.ttlHours * 3600, 'api', sessionId),
    issueMedia: (userId, tokenVersion) =>
      sign(userId, tokenVersion, (opts.mediaTtlMinutes ?? 15) * 60, 'media', null),
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
          sessionId: typeof payload.sid === 'string' ? payload.sid : null,
          tokenId: payload.jti ?? '',
          expiresAt: new Date(payload.exp * 1000),
          scope: payload.scope === 'media' ? 'media' : 'api',
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

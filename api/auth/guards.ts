import type { Request } from 'express';
import { NotAllowedError, NotAuthenticatedError } from '../../core/errors';
import type { Db } from '../../activities/db';
import type { RouteGuards } from '../http/route-group';
import type { RateLimiter } from '../rate-limit';
import { roleAtLeast, type Principal, type Role } from './principal';
import type { TokenIssuer } from './tokens';

/** Where a route may take its token from, besides the Authorization header. */
export interface TokenSources {
  /** `?token=`: the GET event streams (EventSource cannot set headers). */
  allowQueryToken: boolean;
  /** `?media_token=` and media-scoped tokens: GET of frame images and object crops. */
  allowMediaToken?: boolean;
}

const MEDIA_ONLY = 'a media token reads only frame images and object crops';

/** Reads the bearer token; `?token=` and `?media_token=` only where the route allows them. */
export function tokenFromRequest(req: Request, sources: TokenSources): string {
  const header = req.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!match) throw new NotAuthenticatedError('Authorization header must be "Bearer <token>"');
    return match[1]!;
  }
  const media = req.query.media_token;
  if (media !== undefined) {
    if (!sources.allowMediaToken) throw new NotAuthenticatedError(MEDIA_ONLY);
    if (typeof media === 'string' && media) return media;
  }
  const allowQueryToken = sources.allowQueryToken;
  const fromQuery = req.query.token;
  if (fromQuery !== undefined) {
    if (!allowQueryToken) {
      throw new NotAuthenticatedError(
        'a token in the query string is accepted only on GET of the /api/events streams',
      );
    }
    if (typeof fromQuery === 'string' && fromQuery) return fromQuery;
  }
  throw new NotAuthenticatedError('a bearer token is required');
}

/** Resolves a token to a live principal: the user must exist, be enabled and hold the same token_version. */
export async function principalFromToken(
  db: Db,
  tokens: TokenIssuer,
  token: string,
  opts: { allowMediaToken?: boolean } = {},
): Promise<Principal> {
  const claims = await tokens.verify(token);
  if (claims.scope === 'media' && !opts.allowMediaToken) throw new NotAuthenticatedError(MEDIA_ONLY);
  const user = await db.user.findUnique({
    where: { id: claims.userId },
    select: { id: true, email: true, role: true, tokenVersion: true, disabledAt: true },
  });
  if (!user || user.disabledAt) throw new NotAuthenticatedError('token is not valid');
  if (user.tokenVersion !== claims.tokenVersion) throw new NotAuthenticatedError('token was revoked');
  if (claims.sessionId) {
    const session = await db.authSession.findUnique({
      where: { id: claims.sessionId },
      select: { userId: true, revokedAt: true },
    });
    if (!session || session.userId !== user.id || session.revokedAt)
      throw new NotAuthenticatedError('this sign-in has ended (signed out or revoked); sign in again');
  }
  return {
    userId: user.id,
    email: user.email,
    role: user.role,
    tokenVersion: user.tokenVersion,
    sessionId: claims.sessionId,
    tokenId: claims.tokenId,
    expiresAt: claims.expiresAt,
  };
}

export function createRouteGuards(deps: { db: Db; tokens: TokenIssuer; limiter: RateLimiter }): RouteGuards {
  return {
    async authenticate(req, sources) {
      const principal = await principalFromToken(deps.db, deps.tokens, tokenFromRequest(req, sources), {
        allowMediaToken: sources.allowMediaToken,
      });
      req.log?.setBindings?.({ user_id: principal.userId });
      return principal;
    },
    authorize(principal: Principal, required: Role) {
      if (!roleAtLeast(principal.role, required)) {
        throw new NotAllowedError(`this route needs the ${required} role; you are ${principal.role}`);
      }
    },
    async limit(_req, principal) {
      if (principal) await deps.limiter.consume('api', principal.userId);
    },
    async bootstrapOpen() {
      return (await deps.db.user.count()) === 0;
    },
  };
}

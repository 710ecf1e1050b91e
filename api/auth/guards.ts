import type { Request } from 'express';
import { NotAllowedError, NotAuthenticatedError } from '../../core/errors';
import type { Db } from '../../activities/db';
import {
  recordServiceAccountUse,
  resolveServiceToken,
  type ServiceTokenUse,
} from '../../activities/service-accounts/accounts';
import { isServiceAccountToken } from '../../activities/service-accounts/tokens';
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

/**
 * What a user who must change their password may do with a token until they have changed it
 * (docs/identity.md): the flag lives on the user row, so it holds for every token of theirs.
 */
const WHILE_PASSWORD_MUST_CHANGE = new Set([
  'POST /api/auth/password/change',
  'POST /api/auth/logout',
  'GET /api/auth/profile',
]);

/** A session's last-seen time is written at most this often: a write per request would be waste. */
const LAST_SEEN_EVERY_MS = 60_000;

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

/** A service token never expires by itself: it lives until rotated or revoked (docs/service-accounts.md). */
const NO_EXPIRY = new Date(8.64e15);

/** The caller behind a service-account token: which account, and whether its current or replaced token. */
interface ServiceAccountPrincipal extends Principal {
  serviceAccount: { id: string; token: ServiceTokenUse['token'] };
}

const isServiceAccountPrincipal = (p: Principal): p is ServiceAccountPrincipal => 'serviceAccount' in p;

function servicePrincipal({ account, token }: ServiceTokenUse): ServiceAccountPrincipal {
  return {
    userId: account.user.id,
    email: account.user.email,
    role: account.user.role,
    tokenVersion: account.user.tokenVersion,
    sessionId: null,
    tokenId: `service-account:${account.id}`,
    expiresAt: token === 'previous' && account.previousExpiresAt ? account.previousExpiresAt : NO_EXPIRY,
    serviceAccount: { id: account.id, token },
  };
}

/**
 * Resolves a token to a live principal. A service-account token (`dls_…`) is looked up by its
 * hash; a JWT's user must exist, be enabled, hold the same token_version and be a person: a
 * service user's only credential is its service token.
 */
export async function principalFromToken(
  db: Db,
  tokens: TokenIssuer,
  token: string,
  opts: { allowMediaToken?: boolean; allowWhilePasswordMustChange?: boolean } = {},
): Promise<Principal> {
  if (isServiceAccountToken(token)) return servicePrincipal(await resolveServiceToken(db, token));
  const claims = await tokens.verify(token);
  if (claims.scope === 'media' && !opts.allowMediaToken) throw new NotAuthenticatedError(MEDIA_ONLY);
  const user = await db.user.findUnique({
    where: { id: claims.userId },
    select: {
      id: true,
      email: true,
      role: true,
      tokenVersion: true,
      disabledAt: true,
      mustChangePassword: true,
      kind: true,
    },
  });
  if (!user || user.disabledAt || user.kind === 'service')
    throw new NotAuthenticatedError('token is not valid');
  if (user.tokenVersion !== claims.tokenVersion) throw new NotAuthenticatedError('token was revoked');
  if (claims.sessionId) {
    const session = await db.authSession.findUnique({
      where: { id: claims.sessionId },
      select: { userId: true, revokedAt: true, lastSeenAt: true },
    });
    if (!session || session.userId !== user.id || session.revokedAt)
      throw new NotAuthenticatedError('this sign-in has ended (signed out or revoked); sign in again');
    if (Date.now() - session.lastSeenAt.getTime() > LAST_SEEN_EVERY_MS)
      await db.authSession.update({ where: { id: claims.sessionId }, data: { lastSeenAt: new Date() } });
  }
  if (user.mustChangePassword && !opts.allowWhilePasswordMustChange)
    throw new NotAllowedError(
      'this account must change its password first (POST /api/auth/password/change); until then the token does nothing else',
    );
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

const recorded = new WeakSet<Request>();

/**
 * Every request made with a service token lands in the activity log (and the account's
 * last_used_at) once it has been answered: the status is known then, and the request does not
 * wait on the write. A request is recorded once however often it is authenticated.
 */
function recordUseWhenAnswered(db: Db, req: Request, principal: ServiceAccountPrincipal): void {
  const res = req.res;
  if (!res || recorded.has(req)) return;
  recorded.add(req);
  res.once('close', () => {
    const template = (req.route as { path?: string } | undefined)?.path;
    recordServiceAccountUse(db, {
      accountId: principal.serviceAccount.id,
      userId: principal.userId,
      token: principal.serviceAccount.token,
      method: req.method,
      route: template ? `${req.baseUrl}${template}` : req.path,
      status: res.statusCode,
      requestId: req.id === undefined ? null : String(req.id),
    }).catch((err: unknown) => req.log?.warn({ err }, 'a service-account use was not recorded'));
  });
}

export function createRouteGuards(deps: { db: Db; tokens: TokenIssuer; limiter: RateLimiter }): RouteGuards {
  return {
    async authenticate(req, sources) {
      const route = `${req.method} ${req.baseUrl}${(req.route as { path?: string } | undefined)?.path ?? ''}`;
      const principal = await principalFromToken(deps.db, deps.tokens, tokenFromRequest(req, sources), {
        allowMediaToken: sources.allowMediaToken,
        allowWhilePasswordMustChange: WHILE_PASSWORD_MUST_CHANGE.has(route),
      });
      if (isServiceAccountPrincipal(principal)) recordUseWhenAnswered(deps.db, req, principal);
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

import type { Request, Response } from 'express';
import { z } from 'zod';
import { recordAudit } from '../../../activities/audit';
import {
  accountForIdentity,
  createOidcClient,
  type OidcClient,
  type OidcSettings,
} from '../../../activities/identity/oidc';
import type { AppConfig } from '../../../core/config';
import { NotAuthenticatedError, UnavailableError } from '../../../core/errors';
import {
  oidcConfigured,
  oidcMissing,
  RETURN_TO_MAX,
  RETURN_TO_PATTERN,
  returnLocation,
} from '../../../core/identity/oidc';
import type { RouteGroup } from '../../http/route-group';
import { clientAddress, firstFactorPassed, type IdentityContext } from './context';

/** Holds the state of the sign-in this browser started, so a callback from another browser is refused. */
const STATE_COOKIE = 'drivelab_oidc_state';

const OidcStartQuery = z.strictObject({
  return_to: z
    .string()
    .max(RETURN_TO_MAX)
    // A refinement, not .regex: the pattern uses Unicode classes that OpenAPI tools cannot read.
    .refine(
      (v) => RETURN_TO_PATTERN.test(v),
      'must be a path on this site, such as /review (no scheme, host or fragment)',
    )
    .optional()
    .meta({ description: 'Where the web UI continues after sign-in (default `/`)' }),
});

/** The authorization response; providers add parameters of their own (session_state…), so it is not strict. */
const OidcCallbackQuery = z.object({
  state: z.string().min(1).max(512),
  code: z.string().max(4096).optional(),
  error: z.string().max(256).optional(),
  error_description: z.string().max(2048).optional(),
  iss: z.string().max(2048).optional(),
});

const notConfigured = (config: AppConfig) =>
  new UnavailableError(`OIDC sign-in is not configured: set ${oidcMissing(config.oidc).join(', ')}`);

/** The browser's copy of the sign-in state, from the Cookie header. */
function stateCookie(req: Request): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...value] = part.trim().split('=');
    if (name === STATE_COOKIE) return decodeURIComponent(value.join('='));
  }
  return null;
}

/** A redirect that no cache keeps and whose body says nothing of where it goes. */
function redirect(res: Response, location: string, text: string): void {
  res.status(302).set({ Location: location, 'Cache-Control': 'no-store' }).type('text/plain').send(text);
}

/**
 * GET /api/auth/oidc/start and …/callback (docs/oidc.md): sign-in with the configured OpenID
 * Connect provider. Sets `ctx.methods.oidc` for GET /api/auth/methods.
 */
export function addOidcRoutes(group: RouteGroup, ctx: IdentityContext): void {
  const { db, config } = ctx.deps;
  const configured = oidcConfigured(config);
  ctx.methods.oidc.enabled = configured;
  const settings = config.oidc as OidcSettings;
  const client: OidcClient | null = configured ? createOidcClient(db, settings) : null;
  const cookiePath = configured ? new URL(settings.redirectUri).pathname : '/';
  const secureCookie = configured && new URL(settings.redirectUri).protocol === 'https:';

  group
    .get(
      '/api/auth/oidc/start',
      {
        summary:
          'Start signing in with the OIDC provider: redirects (302) the browser to its authorization endpoint (authorization code, PKCE S256, state and nonce)',
        access: 'public',
        query: OidcStartQuery,
        successStatus: 302,
        respondsItself: { contentType: 'text/plain' },
        statuses: {
          503: 'OIDC is not configured (the detail names the missing settings), or the provider does not answer',
        },
      },
      async ({ query, req, res }) => {
        if (!client) throw notConfigured(config);
        await ctx.limiter.consume('login-address', clientAddress(req));
        const { state, authorizationUrl } = await client.begin(query.return_to ?? null);
        res.cookie(STATE_COOKIE, state, {
          httpOnly: true,
          // Lax: the cookie rides the provider's top-level redirect back, not cross-site subrequests.
          sameSite: 'lax',
          secure: secureCookie,
          path: cookiePath,
          maxAge: settings.stateTtlSeconds * 1000,
        });
        redirect(res, authorizationUrl.href, 'Redirecting to the OIDC provider.');
      },
    )
    .get(
      '/api/auth/oidc/callback',
      {
        summary:
          "Where the OIDC provider sends the browser back: redeems the code, links the account by issuer and subject (creating it on a first sign-in), and redirects (302) to the start's `return_to` with the token — or, for an account with MFA on, the `mfa_handle` — in the URL fragment",
        access: 'public',
        query: OidcCallbackQuery,
        successStatus: 302,
        respondsItself: { contentType: 'text/plain' },
        statuses: {
          401: 'the sign-in is refused: unknown, used or expired state, a state this browser did not start, the provider refused, or its answer failed a check (signature, nonce, issuer, audience, expiry); or the account is disabled',
          409: 'a first sign-in whose e-mail belongs to an account not linked to this identity (linking by e-mail off, or the e-mail not verified by the provider)',
          422: 'the provider gave no e-mail address for a new account, or the account is a service account',
          503: 'OIDC is not configured (the detail names the missing settings), or the provider does not answer',
        },
      },
      async ({ query, req, res }) => {
        if (!client) throw notConfigured(config);
        // The state must be the one this browser started (its cookie): a callback link made by
        // someone else's sign-in, sent to this browser, would otherwise sign it in as them.
        if (stateCookie(req) !== query.state)
          throw new NotAuthenticatedError(
            'this browser did not start the OIDC sign-in this callback belongs to; start again',
          );
        res.clearCookie(STATE_COOKIE, { path: cookiePath });
        const requestId = String(req.id);
        const callbackQuery = new URL(req.originalUrl, 'http://callback.invalid').searchParams;
        const identity = await client.finish(callbackQuery);
        const { user, created, linked } = await accountForIdentity(db, settings, identity, requestId);
        await recordAudit(db, {
          actorId: user.id,
          action: 'user.login',
          subjectType: 'user',
          subjectId: user.id,
          detail: { method: 'oidc', issuer: identity.issuer, created, linked, mfa_required: user.mfaEnabled },
          requestId,
        });
        const answer = await firstFactorPassed(ctx, user, 'oidc', req);
        redirect(res, returnLocation(identity.returnTo ?? '/', answer), 'Signed in; redirecting.');
      },
    );
}

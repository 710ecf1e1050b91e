import { RouteGroup } from '../../http/route-group';
import type { AppDeps } from '../../deps';
import { openSignInSession } from '../../auth/sessions';
import { tokenOut, userOut } from '../users/serialize';

/** The developer's account that dev-login signs into (created on first use). */
const DEV_ADMIN_EMAIL = 'dev-admin@localhost';

/** The `auth` group: token refresh, and dev-login in local environments only. */
export function createAuthRoutes(deps: AppDeps): RouteGroup {
  const group = new RouteGroup('auth')
    .post(
      '/api/auth/refresh',
      { summary: "Roll the caller's token: a new token with a fresh 12-hour lifetime", access: 'annotator' },
      async ({ principal }) =>
        tokenOut(await deps.tokens.issue(principal.userId, principal.tokenVersion, principal.sessionId)),
    )
    .post(
      '/api/auth/media-token',
      {
        summary:
          "A short-lived token that reads frame images and object crops only (`?media_token=`), so <img> and canvas loads need no Authorization header; no other route accepts it; revoked with the user's tokens",
        access: 'annotator',
      },
      async ({ principal }) => {
        const t = await deps.tokens.issueMedia(principal.userId, principal.tokenVersion);
        return { media_token: t.token, token_type: 'media' as const, expires_at: t.expiresAt.toISOString() };
      },
    );
  // The route does not exist outside APP_ENV=local: not merely refused, absent (404).
  if (deps.config.env === 'local') {
    group.post(
      '/api/auth/dev-login',
      { summary: 'Local environments only: mint an admin token', access: 'public' },
      async ({ req }) => {
        const user = await deps.db.user.upsert({
          where: { email: DEV_ADMIN_EMAIL },
          create: { email: DEV_ADMIN_EMAIL, name: 'Local developer', role: 'admin' },
          update: {},
        });
        return { ...tokenOut(await openSignInSession(deps, user, 'dev', req)), user: userOut(user) };
      },
    );
  }
  return group;
}

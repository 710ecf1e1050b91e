import { RouteGroup } from '../../http/route-group';
import type { AppDeps } from '../../deps';
import { addAccountRoutes } from './account';
import { createIdentityContext } from './context';
import { addMfaRoutes } from './mfa';
import { addOidcRoutes } from './oidc';
import { addPasswordRoutes } from './password';
import { addSignupRoutes } from './signup';

/**
 * The `identity` group (docs/identity.md): password sign-in with MFA (TOTP), sessions, password
 * change and reset by e-mail, sign-up, OIDC. Each file adds its routes to the one group; every
 * sign-in method ends in ./context's firstFactorPassed, so MFA applies to each.
 */
export function createIdentityRoutes(deps: AppDeps): RouteGroup {
  const ctx = createIdentityContext(deps);
  const group = new RouteGroup('identity');
  addPasswordRoutes(group, ctx);
  addMfaRoutes(group, ctx);
  addSignupRoutes(group, ctx);
  addAccountRoutes(group, ctx);
  addOidcRoutes(group, ctx);
  return group;
}

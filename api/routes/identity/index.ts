import { NotAuthenticatedError } from '../../../core/errors';
import { recordAudit } from '../../../activities/audit';
import { hashPassword, passwordMatches } from '../../auth/passwords';
import { openSignInSession } from '../../auth/sessions';
import { RouteGroup } from '../../http/route-group';
import type { AppDeps } from '../../deps';
import { tokenOut, userOut } from '../users/serialize';
import { LoginIn } from './validators';

/** The `identity` group: password sign-in. */
export function createIdentityRoutes(deps: AppDeps): RouteGroup {
  // Verifying against a throwaway hash when the e-mail is unknown keeps the timing of a wrong
  // e-mail and a wrong password alike, so login does not reveal which accounts exist.
  const decoyHash = hashPassword('decoy password that never matches');
  return new RouteGroup('identity').post(
    '/api/auth/login',
    {
      summary:
        'Sign in with e-mail and password; rate-limited per client address and e-mail across all API processes',
      access: 'public',
      body: { name: 'LoginIn', schema: LoginIn },
      statuses: { 401: 'wrong e-mail or password', 429: 'too many attempts' },
    },
    async ({ body, req }) => {
      await deps.limiter.consume('login', `${req.ip}:${body.email}`);
      const user = await deps.db.user.findUnique({ where: { email: body.email } });
      const ok = await passwordMatches(user?.passwordHash ?? (await decoyHash), body.password);
      if (!user || !ok || user.disabledAt) {
        throw new NotAuthenticatedError('wrong e-mail or password');
      }
      await recordAudit(deps.db, {
        actorId: user.id,
        action: 'user.login',
        subjectType: 'user',
        subjectId: user.id,
        requestId: String(req.id),
      });
      return { ...tokenOut(await openSignInSession(deps, user, 'password', req)), user: userOut(user) };
    },
  );
}

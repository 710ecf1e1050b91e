import {
  mailPasswordReset,
  redeemPasswordReset,
  resetTokenOwner,
} from '../../../activities/identity/password-reset';
import { InputError, NotAuthenticatedError, RefusedError } from '../../../core/errors';
import { passwordProblems } from '../../../core/identity/password-policy';
import type { User } from '../../../generated/prisma/client';
import { hashPassword, passwordMatches } from '../../auth/passwords';
import { endSessions } from '../../auth/sessions';
import type { RouteGroup } from '../../http/route-group';
import { auditSelf, clientAddress, firstFactorPassed, type IdentityContext } from './context';
import { ChangePasswordIn, LoginIn, PasswordResetIn, ResetRequestIn } from './validators';

/**
 * Refuses a new password that breaks the policy or is the password in use, naming each rule
 * under `field`. Shared by change, reset and sign-up.
 */
export async function checkNewPassword(
  ctx: IdentityContext,
  password: string,
  account: Pick<User, 'email' | 'passwordHash'>,
  field: string,
): Promise<void> {
  const problems = passwordProblems(password, ctx.deps.config.auth.passwordMinLength, account);
  if (await passwordMatches(account.passwordHash, password))
    problems.push('must differ from the current password');
  if (problems.length)
    throw new InputError(
      `${field.replace(/^body\./, '')} ${problems.join('; ')}`,
      problems.map((message) => ({ field, message })),
    );
}

/** Password sign-in, change and reset by e-mail. */
export function addPasswordRoutes(group: RouteGroup, ctx: IdentityContext): void {
  const { db, config } = ctx.deps;
  // Verifying against a throwaway hash when the account is unknown (or has no password) keeps the
  // timing of a wrong e-mail and a wrong password alike, so login does not say which accounts exist.
  const decoyHash = hashPassword('decoy password that never matches');
  group
    .post(
      '/api/auth/login',
      {
        summary:
          'Sign in with e-mail and password: a token, or, when the account has MFA on, an `mfa_handle` for POST /api/auth/login/mfa and no token. Limited per account and per client address across all API processes',
        access: 'public',
        body: { name: 'LoginIn', schema: LoginIn },
        statuses: { 401: 'wrong e-mail or password' },
      },
      async ({ body, req }) => {
        await ctx.limiter.consume('login-address', clientAddress(req));
        await ctx.deps.limiter.consume('login', body.email);
        const user = await db.user.findUnique({ where: { email: body.email } });
        const ok = await passwordMatches(user?.passwordHash ?? (await decoyHash), body.password);
        // A service account never signs in with a password, whatever its row holds.
        if (!user || !ok || user.disabledAt || user.kind !== 'person')
          throw new NotAuthenticatedError('wrong e-mail or password');
        await auditSelf(db, user.id, 'user.login', req, { mfa_required: user.mfaEnabled });
        return firstFactorPassed(ctx, user, 'password', req);
      },
    )
    .post(
      '/api/auth/password/change',
      {
        summary:
          "Change the caller's password (ChangePasswordIn): `current_password` is required unless the account must change its password; every other sign-in session of the caller ends",
        access: 'annotator',
        body: { name: 'ChangePasswordIn', schema: ChangePasswordIn },
        statuses: {
          422: 'current_password missing or wrong, the new password breaks the policy (each rule named), or the caller is a service account',
        },
      },
      async ({ body, principal, req }) => {
        const user = await db.user.findUniqueOrThrow({ where: { id: principal.userId } });
        if (user.kind !== 'person') throw new RefusedError('a service account has no password');
        // The current password is a guess like a sign-in's: it spends the same per-account budget.
        await ctx.deps.limiter.consume('login', user.email);
        if (!user.mustChangePassword) {
          if (body.current_password === null)
            throw new InputError('current_password is required to change the password', [
              {
                field: 'body.current_password',
                message: 'required unless the account must change its password',
              },
            ]);
          if (!user.passwordHash)
            throw new RefusedError('this account has no password yet: set one with a reset by e-mail');
          if (!(await passwordMatches(user.passwordHash, body.current_password)))
            throw new RefusedError('current_password is wrong');
        }
        await checkNewPassword(ctx, body.new_password, user, 'body.new_password');
        const passwordHash = await hashPassword(body.new_password);
        const ended = await db.$transaction(async (tx) => {
          await tx.user.update({ where: { id: user.id }, data: { passwordHash, mustChangePassword: false } });
          const count = await endSessions(tx, user.id, principal.sessionId);
          await auditSelf(tx, user.id, 'user.password.changed', req, {
            sessions_ended: count,
            was_required: user.mustChangePassword,
          });
          return count;
        });
        return { changed: true, must_change_password: false, other_sessions_ended: ended };
      },
    )
    .post(
      '/api/auth/password/reset-request',
      {
        summary:
          'Ask for a password reset by e-mail. The answer is the same, and comes before the address is looked up, whether or not an account has it; limited per client address and per e-mail',
        access: 'public',
        body: { name: 'ResetRequestIn', schema: ResetRequestIn },
        successStatus: 202,
      },
      async ({ body, req }) => {
        await ctx.limiter.consume('mail-request', `address:${clientAddress(req)}`);
        await ctx.limiter.consume('mail-request', `email:${body.email}`);
        ctx.afterAnswer('password reset mail', req, () =>
          mailPasswordReset({ ...ctx.deps, mailer: ctx.mailer }, body.email, String(req.id)),
        );
        return {
          accepted: true,
          detail: `if an account signs in with this address, a reset token is on its way to it; it works once within ${config.auth.resetTokenTtlMinutes} minutes`,
        };
      },
    )
    .post(
      '/api/auth/password/reset',
      {
        summary:
          'Set a new password with the reset token from the e-mail: the token works once; every token and session of the account ends. Answers like a sign-in (a token, or an `mfa_handle` when the account has MFA on)',
        access: 'public',
        body: { name: 'PasswordResetIn', schema: PasswordResetIn },
        statuses: {
          401: 'the reset token is unknown, used or expired',
          422: 'the new password breaks the policy (each rule named)',
        },
      },
      async ({ body, req }) => {
        await ctx.limiter.consume('login-address', clientAddress(req));
        const owner = await resetTokenOwner(db, body.token);
        await checkNewPassword(ctx, body.new_password, owner, 'body.new_password');
        const { userId } = await redeemPasswordReset(
          db,
          body.token,
          await hashPassword(body.new_password),
          String(req.id),
        );
        return firstFactorPassed(
          ctx,
          await db.user.findUniqueOrThrow({ where: { id: userId } }),
          'reset',
          req,
        );
      },
    );
}

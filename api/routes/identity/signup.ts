import {
  acceptInvitation,
  liveInvitation,
  mailSignupInvitation,
} from '../../../activities/identity/invitations';
import { ConflictError, InputError, RefusedError } from '../../../core/errors';
import { signupStep } from '../../../core/identity/signup';
import { Prisma } from '../../../generated/prisma/client';
import { hashPassword } from '../../auth/passwords';
import type { RouteGroup } from '../../http/route-group';
import { auditSelf, clientAddress, signedIn, type IdentityContext } from './context';
import { checkNewPassword } from './password';
import { SignupIn } from './validators';

/** Sign-up: off by default; by invitation, or by an address of an allowed domain (docs/identity.md). */
export function addSignupRoutes(group: RouteGroup, ctx: IdentityContext): void {
  const { db, config } = ctx.deps;
  group.post(
    '/api/auth/signup',
    {
      summary:
        'Create an account (SignupIn), when sign-up is on: with an invitation token, a name and a password (201, signed in, with the role the invitation names); in domain mode `email` alone first asks for an invitation by e-mail (202, the same answer whether or not the address has an account)',
      access: 'public',
      body: { name: 'SignupIn', schema: SignupIn },
      successStatus: 201,
      alsoSucceeds: {
        202: 'domain mode: an invitation is on its way to the address unless it has an account',
      },
      statuses: {
        401: 'the invitation is unknown, used or expired',
        409: 'an account with the invitation’s address exists already',
        422: 'sign-up is off, needs an invitation, or is closed to the address’s domain; a field is missing; the password breaks the policy',
      },
    },
    async ({ body, req, res }) => {
      const step = signupStep(config.auth.signupMode, {
        invitationToken: body.invitation_token ?? null,
        email: body.email ?? null,
        allowedDomains: config.auth.signupDomains,
      });
      if (step.step === 'refuse') throw new RefusedError(step.reason);
      if (step.step === 'mail-invitation') {
        const { email } = step;
        await ctx.limiter.consume('mail-request', `address:${clientAddress(req)}`);
        await ctx.limiter.consume('mail-request', `email:${email}`);
        ctx.afterAnswer('sign-up invitation mail', req, () =>
          mailSignupInvitation({ ...ctx.deps, mailer: ctx.mailer }, email, String(req.id)),
        );
        res.status(202);
        return {
          accepted: true,
          detail: `unless this address has an account, an invitation is on its way to it; it works once within ${config.auth.invitationTtlHours} hours`,
        };
      }
      await ctx.limiter.consume('login-address', clientAddress(req));
      const { token } = step;
      const { name, password } = body;
      if (name === undefined || password === undefined) {
        const missing = (['name', 'password'] as const).filter((f) => body[f] === undefined);
        throw new InputError(
          `an account needs ${missing.join(' and ')}`,
          missing.map((f) => ({ field: `body.${f}`, message: 'required with invitation_token' })),
        );
      }
      const invitation = await liveInvitation(db, token);
      if (body.email !== undefined && body.email !== invitation.email)
        throw new RefusedError('this invitation is for another address');
      await checkNewPassword(ctx, password, { email: invitation.email, passwordHash: null }, 'body.password');
      const passwordHash = await hashPassword(password);
      try {
        const user = await db.$transaction(async (tx) => {
          const accepted = await acceptInvitation(tx, token);
          const created = await tx.user.create({
            data: { email: accepted.email, name, role: accepted.role, passwordHash },
          });
          await auditSelf(tx, created.id, 'user.signed_up', req, {
            invitation_id: accepted.id,
            role: created.role,
          });
          return created;
        });
        return await signedIn(ctx, user, 'signup', req);
      } catch (err) {
        if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
          throw new ConflictError(
            `an account with ${invitation.email} exists already: sign in or reset its password`,
          );
        throw err;
      }
    },
  );
}

import { z } from 'zod';
import { PASSWORD_MAX_LENGTH } from '../../../core/identity/password-policy';
import { EmailAddress } from '../../http/email';

/** A password as sent: the policy (length, repetition, e-mail) is checked by the route, naming each rule. */
const Password = z.string().min(1).max(PASSWORD_MAX_LENGTH);
/** Reset and invitation tokens are 43 base64url characters; anything much longer is not one. */
const SecretToken = z.string().min(1).max(256);

export const LoginIn = z.strictObject({
  email: EmailAddress,
  password: Password,
});

/** Spec CodeIn: a 6-digit TOTP code or a recovery code; `mfa_handle` only for POST /api/auth/login/mfa. */
export const CodeIn = z.strictObject({
  code: z.string().trim().min(1).max(64).meta({
    description: 'A 6-digit code from the authenticator app, or a recovery code (xxxx-xxxx-xxxx)',
  }),
  mfa_handle: z.string().max(64).nullable().default(null).meta({
    description: 'The handle the password step answered; required by POST /api/auth/login/mfa only',
  }),
});

/** Spec ChangePasswordIn. */
export const ChangePasswordIn = z.strictObject({
  new_password: Password,
  current_password: Password.nullable()
    .default(null)
    .meta({ description: 'Required unless the account must change its password (an admin set it)' }),
});

export const ResetRequestIn = z.strictObject({ email: EmailAddress });

export const PasswordResetIn = z.strictObject({
  token: SecretToken.meta({ description: 'The reset token from the e-mail' }),
  new_password: Password,
});

export const SignupIn = z
  .strictObject({
    email: EmailAddress.optional().meta({
      description: 'Domain mode, first step: the address to mail an invitation to',
    }),
    invitation_token: SecretToken.optional().meta({
      description: 'The invitation token (from an admin, or mailed in domain mode)',
    }),
    name: z.string().trim().min(1).max(200).optional(),
    password: Password.optional(),
  })
  .meta({
    description:
      'Either `email` alone (domain mode: an invitation is mailed), or `invitation_token` with `name` and `password` (creates the account)',
  });

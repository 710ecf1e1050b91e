import type { SIGNUP_MODES } from '../config';

/**
 * What POST /api/auth/signup does (docs/identity.md): in `invitation` mode only an invitation's
 * token makes an account; in `domain` mode an address in an allowed domain first asks for one by
 * e-mail (so nobody signs up with an address they cannot read), then makes its account with it.
 */
export type SignupMode = (typeof SIGNUP_MODES)[number];

export type SignupStep =
  | { step: 'refuse'; reason: string }
  | { step: 'accept-invitation'; token: string }
  | { step: 'mail-invitation'; email: string };

export function signupStep(
  mode: SignupMode,
  request: { invitationToken: string | null; email: string | null; allowedDomains: readonly string[] },
): SignupStep {
  if (mode === 'off') return { step: 'refuse', reason: 'sign-up is off on this deployment' };
  if (request.invitationToken !== null) return { step: 'accept-invitation', token: request.invitationToken };
  if (mode === 'invitation')
    return { step: 'refuse', reason: 'sign-up needs an invitation: send its invitation_token' };
  if (request.email === null) return { step: 'refuse', reason: 'send the e-mail address to sign up with' };
  if (!request.allowedDomains.includes(emailDomain(request.email)))
    return {
      step: 'refuse',
      reason: `sign-up is open only to addresses in ${request.allowedDomains.join(', ')}`,
    };
  return { step: 'mail-invitation', email: request.email };
}

/** The part after the last @, in lower case; subdomains are domains of their own. */
export const emailDomain = (email: string): string => email.slice(email.lastIndexOf('@') + 1).toLowerCase();

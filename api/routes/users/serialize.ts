import type { User } from '../../../generated/prisma/client';

/** A user as the API shows it: never the password hash or MFA secret. */
export function userOut(
  user: Pick<User, 'id' | 'email' | 'name' | 'role' | 'mfaEnabled' | 'disabledAt' | 'createdAt'>,
) {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    mfa_enabled: user.mfaEnabled,
    disabled: user.disabledAt !== null,
    created_at: user.createdAt.toISOString(),
  };
}

export const tokenOut = (t: { token: string; expiresAt: Date }) => ({
  token: t.token,
  token_type: 'bearer' as const,
  expires_at: t.expiresAt.toISOString(),
});

/** The three global roles, in increasing privilege (spec Authentication 2). */
export const ROLES = ['annotator', 'reviewer', 'admin'] as const;
export type Role = (typeof ROLES)[number];

export const roleRank = (role: Role): number => ROLES.indexOf(role);

/** Does `role` reach at least `required`? */
export const roleAtLeast = (role: Role, required: Role): boolean => roleRank(role) >= roleRank(required);

/** The authenticated caller of a request. */
export interface Principal {
  userId: string;
  email: string;
  role: Role;
  tokenVersion: number;
  /** The sign-in session the token belongs to (logout ends it); null for tokens minted outside a sign-in. */
  sessionId: string | null;
  /** Token id, for logs and audit. */
  tokenId: string;
  expiresAt: Date;
}

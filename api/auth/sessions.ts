import type { Request } from 'express';
import type { Db } from '../../activities/db';
import type { TokenIssuer } from './tokens';

/** How a sign-in session began (auth_sessions.method). */
export type SignInMethod = 'password' | 'mfa' | 'oidc' | 'signup' | 'reset' | 'dev';

/**
 * Opens a sign-in session and issues its first token. Every token of the session carries its id,
 * so logout and "revoke my other sessions" end exactly the sessions they name, in every API process
 * at once (the guard reads the row on each request).
 */
export async function openSignInSession(
  deps: { db: Db; tokens: TokenIssuer },
  user: { id: string; tokenVersion: number },
  method: SignInMethod,
  req: Request,
): Promise<{ token: string; expiresAt: Date; sessionId: string }> {
  const session = await deps.db.authSession.create({
    data: {
      userId: user.id,
      method,
      ip: req.ip ?? null,
      userAgent: req.headers['user-agent']?.slice(0, 512) ?? null,
    },
  });
  return { ...(await deps.tokens.issue(user.id, user.tokenVersion, session.id)), sessionId: session.id };
}

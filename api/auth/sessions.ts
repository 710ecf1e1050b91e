import type { Request } from 'express';
import type { Db } from '../../activities/db';
import type { Prisma } from '../../generated/prisma/client';
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

/**
 * Ends the user's open sign-in sessions but `keep` (all of them when `keep` is null); their tokens
 * are refused from the next request on. The number ended.
 */
export async function endSessions(
  db: Db | Prisma.TransactionClient,
  userId: string,
  keep: string | null,
): Promise<number> {
  const ended = await db.authSession.updateMany({
    where: { userId, revokedAt: null, ...(keep ? { id: { not: keep } } : {}) },
    data: { revokedAt: new Date() },
  });
  return ended.count;
}

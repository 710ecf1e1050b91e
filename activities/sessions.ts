import { NotFoundError } from '../core/errors';
import type { Prisma, Session } from '../generated/prisma/client';
import type { Db } from './db';

/** The session, or a 404 naming it: the first read of every session-scoped activity. */
export async function requireSession(db: Db | Prisma.TransactionClient, sessionId: string): Promise<Session> {
  const session = await db.session.findUnique({ where: { id: sessionId } });
  if (!session) throw new NotFoundError(`no session ${sessionId}`);
  return session;
}

import type { Logger } from 'pino';
import type { AppConfig } from '../../core/config';
import { NotAuthenticatedError } from '../../core/errors';
import { passwordResetMail } from '../../core/identity/mail-text';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { canMail, type Mailer } from './mail';
import { hashSecretToken, newSecretToken } from './secret-tokens';

export interface ResetDeps {
  db: Db;
  config: AppConfig;
  logger: Logger;
  mailer: Mailer | null;
}

/**
 * Mails a reset token to the account of `email`, if there is one that signs in with a password.
 * The caller has answered already, so neither its answer nor its timing says whether the address
 * exists; what went wrong is only logged, never with the address or the token.
 */
export async function mailPasswordReset(deps: ResetDeps, email: string, requestId: string): Promise<void> {
  if (!canMail(deps, 'password reset', requestId)) return;
  const user = await deps.db.user.findUnique({ where: { email } });
  if (!user || user.disabledAt || user.kind !== 'person') return;
  const { token, hash } = newSecretToken();
  const ttlMinutes = deps.config.auth.resetTokenTtlMinutes;
  await deps.db.passwordReset.create({
    data: { userId: user.id, tokenHash: hash, expiresAt: new Date(Date.now() + ttlMinutes * 60_000) },
  });
  await recordAudit(deps.db, {
    actorId: null,
    action: 'user.password.reset_requested',
    subjectType: 'user',
    subjectId: user.id,
    requestId,
  });
  await deps.mailer.send(
    user.email,
    passwordResetMail({ product: deps.config.auth.issuer, email: user.email, token, ttlMinutes }),
  );
}

const resetRefused = () =>
  new NotAuthenticatedError('this reset token is unknown, used or expired; ask for a new one');

/** The account a live reset token resets (to check the new password against), or a refusal. */
export async function resetTokenOwner(db: Db, token: string) {
  const reset = await db.passwordReset.findUnique({
    where: { tokenHash: hashSecretToken(token) },
    include: { user: true },
  });
  if (!reset || reset.usedAt || reset.expiresAt <= new Date()) throw resetRefused();
  return reset.user;
}

/**
 * Spends a reset token and sets the new password, in one transaction: the token and every other
 * outstanding one of the user are used up, the user's token_version moves (every token dies) and
 * every sign-in session ends. Unknown, used and expired tokens are refused alike.
 */
export async function redeemPasswordReset(
  db: Db,
  token: string,
  passwordHash: string,
  requestId: string,
): Promise<{ userId: string }> {
  const refused = resetRefused();
  return db.$transaction(async (tx) => {
    const now = new Date();
    const reset = await tx.passwordReset.findUnique({ where: { tokenHash: hashSecretToken(token) } });
    if (!reset || reset.usedAt || reset.expiresAt <= now) throw refused;
    const spent = await tx.passwordReset.updateMany({
      where: { id: reset.id, usedAt: null },
      data: { usedAt: now },
    });
    // A concurrent redemption of the same token got there first.
    if (spent.count === 0) throw refused;
    await tx.passwordReset.updateMany({
      where: { userId: reset.userId, usedAt: null },
      data: { usedAt: now },
    });
    const user = await tx.user.findUniqueOrThrow({ where: { id: reset.userId } });
    if (user.disabledAt || user.kind !== 'person') throw refused;
    await tx.user.update({
      where: { id: user.id },
      data: { passwordHash, mustChangePassword: false, tokenVersion: { increment: 1 } },
    });
    await tx.authSession.updateMany({
      where: { userId: user.id, revokedAt: null },
      data: { revokedAt: now },
    });
    await recordAudit(tx, {
      actorId: user.id,
      action: 'user.password.reset',
      subjectType: 'user',
      subjectId: user.id,
      requestId,
    });
    return { userId: user.id };
  });
}

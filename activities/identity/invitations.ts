import type { Logger } from 'pino';
import type { AppConfig } from '../../core/config';
import { NotAuthenticatedError } from '../../core/errors';
import { invitationMail } from '../../core/identity/mail-text';
import type { Prisma, Role } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { canMail, type Mailer } from './mail';
import { hashSecretToken, newSecretToken } from './secret-tokens';

export interface InvitationDeps {
  db: Db;
  config: AppConfig;
  mailer: Mailer | null;
}

/**
 * Records an invitation (its token hashed) and mails the token when a transport is configured.
 * The token is returned for an admin to hand over only when it was not mailed.
 */
export async function createInvitation(
  deps: InvitationDeps,
  invite: { email: string; role: Role; invitedBy: string | null },
): Promise<{ invitationId: string; expiresAt: Date; mailed: boolean; token: string | null }> {
  const { token, hash } = newSecretToken();
  const ttlHours = deps.config.auth.invitationTtlHours;
  const invitation = await deps.db.invitation.create({
    data: {
      email: invite.email,
      role: invite.role,
      tokenHash: hash,
      invitedBy: invite.invitedBy,
      expiresAt: new Date(Date.now() + ttlHours * 3_600_000),
    },
  });
  await recordAudit(deps.db, {
    actorId: invite.invitedBy,
    action: 'user.invited',
    subjectType: 'invitation',
    subjectId: invitation.id,
    detail: { email: invite.email, role: invite.role },
  });
  if (!deps.mailer)
    return { invitationId: invitation.id, expiresAt: invitation.expiresAt, mailed: false, token };
  await deps.mailer.send(
    invite.email,
    invitationMail({
      product: deps.config.auth.issuer,
      email: invite.email,
      token,
      role: invite.role,
      ttlHours,
    }),
  );
  return { invitationId: invitation.id, expiresAt: invitation.expiresAt, mailed: true, token: null };
}

/**
 * Domain-mode sign-up, after the caller has answered: an address that has no account yet gets an
 * invitation as the lowest role by mail. Nothing is said about addresses that have one.
 */
export async function mailSignupInvitation(
  deps: InvitationDeps & { logger: Logger },
  email: string,
  requestId: string,
): Promise<void> {
  if (!canMail(deps, 'sign-up invitation', requestId)) return;
  if (await deps.db.user.findUnique({ where: { email }, select: { id: true } })) return;
  await createInvitation(deps, { email, role: 'annotator', invitedBy: null });
}

const invitationRefused = () =>
  new NotAuthenticatedError('this invitation is unknown, used or expired; ask for a new one');

/** A live invitation by its token; unknown, used and expired ones are refused alike. */
export async function liveInvitation(db: Db | Prisma.TransactionClient, token: string) {
  const invitation = await db.invitation.findUnique({ where: { tokenHash: hashSecretToken(token) } });
  if (!invitation || invitation.acceptedAt || invitation.expiresAt <= new Date()) throw invitationRefused();
  return invitation;
}

/** Spends an invitation inside the caller's transaction: of two concurrent acceptances one wins. */
export async function acceptInvitation(tx: Prisma.TransactionClient, token: string) {
  const invitation = await liveInvitation(tx, token);
  const spent = await tx.invitation.updateMany({
    where: { id: invitation.id, acceptedAt: null },
    data: { acceptedAt: new Date() },
  });
  if (spent.count === 0) throw invitationRefused();
  return invitation;
}

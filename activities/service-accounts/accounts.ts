import { ConflictError, NotAuthenticatedError, NotFoundError } from '../../core/errors';
import { Prisma, type Role, type ServiceAccount, type User } from '../../generated/prisma/client';
import { recordAudit } from '../audit';
import type { Db } from '../db';
import { hashServiceToken, isWellFormedServiceToken, newServiceToken } from './tokens';

/**
 * Service accounts (docs/service-accounts.md): a machine identity is a `users` row of kind
 * `service` (no password, so no sign-in) plus its `service_accounts` row, which holds the sha256 of
 * its one live token and, for a rotation with a grace period, of the token it replaced.
 */

/** Where a service user's e-mail lives: `.invalid` is reserved (RFC 2606), so no mail ever leaves. */
export const SERVICE_EMAIL_DOMAIN = 'service.invalid';

export type AccountUser = Pick<User, 'id' | 'email' | 'role' | 'tokenVersion' | 'disabledAt'>;
export type AccountWithUser = ServiceAccount & { user: AccountUser };

const withUser = {
  user: { select: { id: true, email: true, role: true, tokenVersion: true, disabledAt: true } },
} as const;

interface Actor {
  userId: string;
  requestId: string;
}

export async function createServiceAccount(
  db: Db,
  input: { name: string; role: Role; description: string | null },
  actor: Actor,
): Promise<{ account: AccountWithUser; token: string }> {
  const minted = newServiceToken();
  try {
    const account = await db.$transaction(async (tx) => {
      const user = await tx.user.create({
        data: {
          email: `${input.name}@${SERVICE_EMAIL_DOMAIN}`,
          name: input.name,
          role: input.role,
          kind: 'service',
        },
      });
      const created = await tx.serviceAccount.create({
        data: {
          userId: user.id,
          name: input.name,
          description: input.description,
          tokenHash: minted.hash,
          tokenPrefix: minted.prefix,
          createdBy: actor.userId,
        },
        include: withUser,
      });
      await recordAudit(tx, {
        actorId: actor.userId,
        action: 'service_account.created',
        subjectType: 'service_account',
        subjectId: created.id,
        detail: { name: created.name, role: input.role, user_id: user.id, token_prefix: minted.prefix },
        requestId: actor.requestId,
      });
      return created;
    });
    return { account, token: minted.token };
  } catch (err) {
    if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002')
      throw new ConflictError(
        `a service account named ${input.name} (or a user with e-mail ${input.name}@${SERVICE_EMAIL_DOMAIN}) exists already`,
      );
    throw err;
  }
}

export async function findServiceAccount(db: Db, id: string): Promise<AccountWithUser> {
  const account = await db.serviceAccount.findUnique({ where: { id }, include: withUser });
  if (!account) throw new NotFoundError(`no service account ${id}`);
  return account;
}

/** Accounts in creation order, revoked ones included (they keep their name). */
export async function listServiceAccounts(
  db: Db,
  page: { limit: number; cursor?: string | undefined },
): Promise<AccountWithUser[]> {
  return db.serviceAccount.findMany({
    include: withUser,
    orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    take: page.limit + 1,
    ...(page.cursor ? { cursor: { id: page.cursor }, skip: 1 } : {}),
  });
}

const refuseRevoked = (account: ServiceAccount, what: string) => {
  if (account.revokedAt)
    throw new ConflictError(
      `service account ${account.name} was revoked at ${account.revokedAt.toISOString()}; ${what}`,
    );
};

/**
 * Revokes for good: both tokens stop at once, in every API process (the guard reads the row on
 * each request). The service user is disabled and its token_version bumped as well, so nothing
 * else issued to it survives.
 */
export async function revokeServiceAccount(db: Db, id: string, actor: Actor): Promise<AccountWithUser> {
  const account = await findServiceAccount(db, id);
  refuseRevoked(account, 'a revoke is final: create a new account instead');
  return db.$transaction(async (tx) => {
    const now = new Date();
    const revoked = await tx.serviceAccount.updateMany({
      where: { id, revokedAt: null },
      data: { revokedAt: now, previousTokenHash: null, previousExpiresAt: null },
    });
    if (revoked.count === 0) throw new ConflictError(`service account ${account.name} was revoked meanwhile`);
    await tx.user.update({
      where: { id: account.userId },
      data: { disabledAt: now, tokenVersion: { increment: 1 } },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'service_account.revoked',
      subjectType: 'service_account',
      subjectId: id,
      detail: { name: account.name, token_prefix: account.tokenPrefix },
      requestId: actor.requestId,
    });
    return tx.serviceAccount.findUniqueOrThrow({ where: { id }, include: withUser });
  });
}

/**
 * Issues a new token. The old one stops at once, or keeps working for `graceSeconds` (its hash
 * moves to previous_token_hash) so a deployment can switch without an outage. Only one previous
 * token is kept: a second rotation within a grace period ends the first one's grace at once.
 */
export async function rotateServiceAccount(
  db: Db,
  id: string,
  graceSeconds: number,
  actor: Actor,
): Promise<{ account: AccountWithUser; token: string }> {
  const account = await findServiceAccount(db, id);
  refuseRevoked(account, 'a revoked account cannot be given a new token');
  const minted = newServiceToken();
  const now = new Date();
  const previousExpiresAt = graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null;
  const rotated = await db.$transaction(async (tx) => {
    // Conditional on the token this request saw: of two rotations at once, the second is refused.
    const changed = await tx.serviceAccount.updateMany({
      where: { id, revokedAt: null, tokenHash: account.tokenHash },
      data: {
        tokenHash: minted.hash,
        tokenPrefix: minted.prefix,
        previousTokenHash: previousExpiresAt ? account.tokenHash : null,
        previousExpiresAt,
        rotatedAt: now,
      },
    });
    if (changed.count === 0)
      throw new ConflictError(`service account ${account.name} was rotated or revoked meanwhile; try again`);
    await recordAudit(tx, {
      actorId: actor.userId,
      action: 'service_account.rotated',
      subjectType: 'service_account',
      subjectId: id,
      detail: {
        name: account.name,
        token_prefix: minted.prefix,
        replaced_prefix: account.tokenPrefix,
        grace_seconds: graceSeconds,
        previous_expires_at: previousExpiresAt?.toISOString() ?? null,
      },
      requestId: actor.requestId,
    });
    return tx.serviceAccount.findUniqueOrThrow({ where: { id }, include: withUser });
  });
  return { account: rotated, token: minted.token };
}

/** The account a presented token belongs to, and which of its tokens it is. */
export interface ServiceTokenUse {
  account: AccountWithUser;
  token: 'current' | 'previous';
}

/**
 * Resolves a presented service token: its current token, or the one a rotation replaced while
 * that one's grace lasts. A revoked account, a disabled service user and an expired previous token
 * are refused, each saying which.
 */
export async function resolveServiceToken(db: Db, token: string, now = new Date()): Promise<ServiceTokenUse> {
  if (!isWellFormedServiceToken(token)) throw new NotAuthenticatedError('token is not valid');
  const hash = hashServiceToken(token);
  const account = await db.serviceAccount.findFirst({
    where: { OR: [{ tokenHash: hash }, { previousTokenHash: hash }] },
    include: withUser,
  });
  if (!account) throw new NotAuthenticatedError('token is not valid');
  if (account.revokedAt) throw new NotAuthenticatedError('this service account was revoked');
  if (account.user.disabledAt) throw new NotAuthenticatedError('token is not valid');
  if (account.tokenHash === hash) return { account, token: 'current' };
  if (account.previousExpiresAt && account.previousExpiresAt > now) return { account, token: 'previous' };
  throw new NotAuthenticatedError('this token was replaced by a rotation and its grace period has ended');
}

/** One request made with a service token, as the activity log keeps it. */
export interface ServiceAccountUse {
  accountId: string;
  userId: string;
  token: 'current' | 'previous';
  method: string;
  /** The route template that answered (`/api/jobs/:kind/:job_id/cancel`), or the path when none did. */
  route: string;
  status: number;
  requestId: string | null;
}

/** Records a use: the account's last_used_at and an audit row, side by side. */
export async function recordServiceAccountUse(db: Db, use: ServiceAccountUse): Promise<void> {
  await Promise.all([
    db.serviceAccount.update({ where: { id: use.accountId }, data: { lastUsedAt: new Date() } }),
    recordAudit(db, {
      actorId: use.userId,
      action: 'service_account.used',
      subjectType: 'service_account',
      subjectId: use.accountId,
      detail: { method: use.method, route: use.route, status: use.status, token: use.token },
      requestId: use.requestId,
    }),
  ]);
}

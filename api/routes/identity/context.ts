import type { Request } from 'express';
import { recordAudit } from '../../../activities/audit';
import type { Db } from '../../../activities/db';
import { createMailer, type Mailer } from '../../../activities/identity/mail';
import type { Prisma, User } from '../../../generated/prisma/client';
import { openSignInSession, type SignInMethod } from '../../auth/sessions';
import type { AppDeps } from '../../deps';
import { createRateLimiter, type RateLimiter } from '../../rate-limit';
import { tokenOut, userOut } from '../users/serialize';

/** What the identity group's routes share (docs/identity.md). */
export interface IdentityContext {
  deps: AppDeps;
  /**
   * The group's own budgets, in the same PostgreSQL counters as `deps.limiter` (whose `login`
   * policy is the per-account sign-in budget): `login-address`, `mfa-account`, `mfa-address`,
   * `mail-request`.
   */
  limiter: RateLimiter;
  mailer: Mailer | null;
  /** What GET /api/auth/methods says of each method; the OIDC routes set `oidc` when configured. */
  methods: { oidc: { enabled: boolean } };
  /**
   * Runs work after the answer, so that neither the answer nor its timing depends on it (whether an
   * e-mail address has an account); a failure is logged without the work's secrets.
   */
  afterAnswer(what: string, req: Request, work: () => Promise<void>): void;
}

export function createIdentityContext(deps: AppDeps): IdentityContext {
  const { auth, rateLimit } = deps.config;
  return {
    deps,
    limiter: createRateLimiter(deps.db, {
      'login-address': { max: auth.loginAddressMax, windowSeconds: rateLimit.loginWindowSeconds },
      'mfa-account': { max: auth.mfaAccountMax, windowSeconds: auth.mfaWindowSeconds },
      'mfa-address': { max: auth.mfaAddressMax, windowSeconds: auth.mfaWindowSeconds },
      'mail-request': { max: auth.mailRequestMax, windowSeconds: auth.mailRequestWindowSeconds },
    }),
    mailer: createMailer(deps.config.mail),
    methods: { oidc: { enabled: false } },
    afterAnswer(what, req, work) {
      const reqId = String(req.id);
      void work().catch((err: unknown) =>
        deps.logger.error({ req_id: reqId, err: errorSummary(err) }, `${what} failed after the answer`),
      );
    },
  };
}

/** An error's name, message and SMTP reply code: enough to act on, and no mail content. */
function errorSummary(err: unknown) {
  if (!(err instanceof Error)) return { message: String(err) };
  const { code, responseCode } = err as Error & { code?: unknown; responseCode?: unknown };
  return { name: err.name, message: err.message, code, responseCode };
}

/** An audit entry of what a user did to their own account (a sign-in, a change), inside `db` when a transaction. */
export const auditSelf = (
  db: Db | Prisma.TransactionClient,
  userId: string,
  action: string,
  req: Request,
  detail?: Prisma.InputJsonValue,
) =>
  recordAudit(db, {
    actorId: userId,
    action,
    subjectType: 'user',
    subjectId: userId,
    detail,
    requestId: String(req.id),
  });

/** The client's address as rate limits count it (behind the loopback proxy, the forwarded one). */
export const clientAddress = (req: Request): string => req.ip ?? req.socket.remoteAddress ?? 'unknown';

/** A finished sign-in: a session and its token. */
export async function signedIn(ctx: IdentityContext, user: User, method: SignInMethod, req: Request) {
  return {
    ...tokenOut(await openSignInSession(ctx.deps, user, method, req)),
    user: userOut(user),
    must_change_password: user.mustChangePassword,
  };
}

/**
 * A sign-in whose first factor passed: finished, or — when the account has MFA on — a handle for
 * the second step (an `mfa_challenges` row every API process sees), and no token yet.
 */
export async function firstFactorPassed(
  ctx: IdentityContext,
  user: User,
  method: SignInMethod,
  req: Request,
) {
  if (!user.mfaEnabled) return signedIn(ctx, user, method, req);
  const ttl = ctx.deps.config.auth.mfaChallengeTtlSeconds;
  const now = Date.now();
  // The user's expired handles are of no further use: they go as new ones come.
  await ctx.deps.db.mfaChallenge.deleteMany({ where: { userId: user.id, expiresAt: { lt: new Date(now) } } });
  const challenge = await ctx.deps.db.mfaChallenge.create({
    data: { userId: user.id, ip: clientAddress(req), expiresAt: new Date(now + ttl * 1000) },
  });
  return {
    mfa_required: true as const,
    mfa_handle: challenge.id,
    mfa_expires_at: challenge.expiresAt.toISOString(),
    attempts_left: ctx.deps.config.auth.mfaChallengeMaxAttempts,
  };
}

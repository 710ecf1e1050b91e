import { recordAudit } from '../../../activities/audit';
import { RefusedError } from '../../../core/errors';
import { endSessions } from '../../auth/sessions';
import type { RouteGroup } from '../../http/route-group';
import { userOut } from '../users/serialize';
import { auditSelf, type IdentityContext } from './context';
import { TOTP_DIGITS, TOTP_PERIOD_SECONDS } from './second-factor';

/** How long after it was last seen a session can still hold a live token: a token's life and the last-seen slack. */
const liveWindowMs = (ttlHours: number) => ttlHours * 3_600_000 + 60_000;

/** Sign-in methods on offer, the caller's profile and sessions, logout. */
export function addAccountRoutes(group: RouteGroup, ctx: IdentityContext): void {
  const { db, config } = ctx.deps;
  group
    .get(
      '/api/auth/methods',
      {
        summary:
          'Which sign-in methods this deployment offers: password (and whether reset by e-mail works), MFA, OIDC, sign-up mode',
        access: 'public',
      },
      () => ({
        password: { enabled: true, reset_by_email: ctx.mailer !== null },
        mfa: { enabled: true, type: 'totp', digits: TOTP_DIGITS, period_seconds: TOTP_PERIOD_SECONDS },
        oidc: ctx.methods.oidc,
        signup: { mode: config.auth.signupMode },
      }),
    )
    .get(
      '/api/auth/profile',
      {
        summary:
          'The caller: user, role, MFA state, open sign-in sessions (method, address, created, last seen) and linked identities',
        access: 'annotator',
      },
      async ({ principal }) => {
        const since = new Date(Date.now() - liveWindowMs(config.auth.tokenTtlHours));
        const user = await db.user.findUniqueOrThrow({
          where: { id: principal.userId },
          include: {
            authSessions: {
              where: { revokedAt: null, lastSeenAt: { gt: since } },
              orderBy: { lastSeenAt: 'desc' },
            },
            identities: { orderBy: { createdAt: 'asc' } },
          },
        });
        return {
          user: userOut(user),
          role: user.role,
          kind: user.kind,
          must_change_password: user.mustChangePassword,
          mfa: {
            enabled: user.mfaEnabled,
            setup_pending: user.mfaPendingSecret !== null,
            recovery_codes_left: await db.mfaRecoveryCode.count({ where: { userId: user.id, usedAt: null } }),
          },
          token_expires_at: principal.expiresAt.toISOString(),
          sessions: user.authSessions.map((s) => ({
            id: s.id,
            method: s.method,
            ip: s.ip,
            user_agent: s.userAgent,
            created_at: s.createdAt.toISOString(),
            last_seen_at: s.lastSeenAt.toISOString(),
            current: s.id === principal.sessionId,
          })),
          identities: user.identities.map((i) => ({
            id: i.id,
            issuer: i.issuer,
            subject: i.subject,
            email: i.email,
            linked_at: i.createdAt.toISOString(),
          })),
        };
      },
    )
    .post(
      '/api/auth/logout',
      {
        summary:
          "End the caller's sign-in session: its tokens stop working in every API process; other sessions stay",
        access: 'annotator',
        statuses: {
          422: 'the token belongs to no sign-in session (minted by an admin): it ends at its expiry or with revoke-tokens',
        },
      },
      async ({ principal, req }) => {
        if (!principal.sessionId)
          throw new RefusedError(
            'this token belongs to no sign-in session (an admin minted it): it ends at its expiry, or when an admin revokes the user’s tokens',
          );
        await db.authSession.updateMany({
          where: { id: principal.sessionId, revokedAt: null },
          data: { revokedAt: new Date() },
        });
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'user.logout',
          subjectType: 'auth_session',
          subjectId: principal.sessionId,
          requestId: String(req.id),
        });
        return { signed_out: true, session_id: principal.sessionId };
      },
    )
    .post(
      '/api/auth/sessions/revoke',
      {
        summary:
          "End every other sign-in session of the caller (all of them when the caller's token belongs to none); the caller's own stays",
        access: 'annotator',
      },
      async ({ principal, req }) => {
        const ended = await endSessions(db, principal.userId, principal.sessionId);
        await auditSelf(db, principal.userId, 'user.sessions.revoked', req, { ended });
        return { revoked: ended, kept_session_id: principal.sessionId };
      },
    );
}

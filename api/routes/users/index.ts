import { NotFoundError, ConflictError } from '../../../core/errors';
import { recordAudit } from '../../../activities/audit';
import { Prisma } from '../../../generated/prisma/client';
import { hashPassword } from '../../auth/passwords';
import { RouteGroup, uuidParams } from '../../http/route-group';
import type { AppDeps } from '../../deps';
import { tokenOut, userOut } from './serialize';
import { UserCreateIn } from './validators';

/** Any constant works; it only serialises first-user creation across API processes. */
const FIRST_USER_LOCK = 727_001;

export function createUsersRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('users')
    .get('/api/users', { summary: 'List users', access: 'reviewer' }, async () => {
      // People only: service users are listed with their accounts (GET /api/service-accounts).
      const users = await db.user.findMany({ where: { kind: 'person' }, orderBy: { createdAt: 'asc' } });
      return { items: users.map(userOut) };
    })
    .post(
      '/api/users',
      {
        summary:
          'Create a user. Without a token only while no user exists (that first user is an admin); afterwards admin only',
        access: 'bootstrap',
        body: { name: 'UserCreateIn', schema: UserCreateIn },
        successStatus: 201,
        statuses: { 409: 'e-mail already registered, or a first user was created meanwhile' },
      },
      async ({ body, principal, req }) => {
        const passwordHash = await hashPassword(body.password);
        try {
          const user = await db.$transaction(async (tx) => {
            if (!principal) {
              // Two tokenless requests racing: the lock makes the second see the first user.
              await tx.$executeRaw`SELECT pg_advisory_xact_lock(${FIRST_USER_LOCK})`;
              if ((await tx.user.count()) > 0)
                throw new ConflictError('a user exists already; creating users now needs an admin token');
            }
            const created = await tx.user.create({
              data: {
                email: body.email,
                name: body.name,
                role: principal ? body.role : 'admin',
                passwordHash,
              },
            });
            await recordAudit(tx, {
              actorId: principal?.userId ?? null,
              action: principal ? 'user.created' : 'user.bootstrapped',
              subjectType: 'user',
              subjectId: created.id,
              detail: { email: created.email, role: created.role },
              requestId: String(req.id),
            });
            return created;
          });
          return userOut(user);
        } catch (err) {
          if (err instanceof Prisma.PrismaClientKnownRequestError && err.code === 'P2002') {
            throw new ConflictError(`a user with e-mail ${body.email} exists already`);
          }
          throw err;
        }
      },
    )
    .get('/api/users/me', { summary: 'The calling user', access: 'annotator' }, async ({ principal }) => {
      const user = await db.user.findUniqueOrThrow({ where: { id: principal.userId } });
      return { ...userOut(user), token_expires_at: principal.expiresAt.toISOString() };
    })
    .post(
      '/api/users/{user_id}/revoke-tokens',
      {
        summary: 'Invalidate every outstanding token of the user (bumps token_version)',
        access: 'admin',
        params: uuidParams('user_id'),
        statuses: { 404: 'no such user' },
      },
      async ({ params, principal, req }) => {
        const userId = params.user_id;
        const user = await db.$transaction(async (tx) => {
          const updated = await tx.user.updateMany({
            where: { id: userId },
            data: { tokenVersion: { increment: 1 } },
          });
          if (updated.count === 0) throw new NotFoundError(`no user ${userId}`);
          await recordAudit(tx, {
            actorId: principal.userId,
            action: 'user.tokens.revoked',
            subjectType: 'user',
            subjectId: userId,
            requestId: String(req.id),
          });
          return tx.user.findUniqueOrThrow({ where: { id: userId } });
        });
        return { user_id: user.id, token_version: user.tokenVersion };
      },
    )
    .post(
      '/api/users/{user_id}/token',
      {
        summary: 'Mint a token for the user; recorded as activity with the admin as actor',
        access: 'admin',
        params: uuidParams('user_id'),
        statuses: { 404: 'no such user' },
      },
      async ({ params, principal, req }) => {
        const userId = params.user_id;
        const user = await db.user.findUnique({ where: { id: userId } });
        // A service user's only credential is its service token (docs/service-accounts.md).
        if (!user || user.disabledAt || user.kind === 'service')
          throw new NotFoundError(`no active user ${userId}`);
        const minted = await deps.tokens.issue(user.id, user.tokenVersion);
        await recordAudit(db, {
          actorId: principal.userId,
          action: 'user.token.minted',
          subjectType: 'user',
          subjectId: user.id,
          detail: { expires_at: minted.expiresAt.toISOString() },
          requestId: String(req.id),
        });
        return { ...tokenOut(minted), user: userOut(user) };
      },
    );
}

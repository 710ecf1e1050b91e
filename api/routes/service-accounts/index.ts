import {
  createServiceAccount,
  listServiceAccounts,
  revokeServiceAccount,
  rotateServiceAccount,
  type AccountWithUser,
} from '../../../activities/service-accounts/accounts';
import { idPage } from '../../../core/pagination';
import type { AppDeps } from '../../deps';
import { actorOf } from '../../http/actor';
import { RouteGroup, uuidParams } from '../../http/route-group';
import { ServiceAccountIn, ServiceAccountRotateIn, ServiceAccountsQuery } from './validators';

/** An account as the API shows it: the token's first characters, never the token nor its hash. */
function serviceAccountOut(a: AccountWithUser, now = new Date()) {
  const graceLasts = a.previousExpiresAt && a.previousExpiresAt > now ? a.previousExpiresAt : null;
  return {
    id: a.id,
    name: a.name,
    description: a.description,
    role: a.user.role,
    user_id: a.userId,
    email: a.user.email,
    state: a.revokedAt ? ('revoked' as const) : ('active' as const),
    token_prefix: a.tokenPrefix,
    previous_token_expires_at: graceLasts?.toISOString() ?? null,
    created_by: a.createdBy,
    created_at: a.createdAt.toISOString(),
    rotated_at: a.rotatedAt?.toISOString() ?? null,
    revoked_at: a.revokedAt?.toISOString() ?? null,
    last_used_at: a.lastUsedAt?.toISOString() ?? null,
  };
}

/** The token, in the one answer that carries it. */
const withToken = (a: AccountWithUser, token: string) => ({
  ...serviceAccountOut(a),
  token,
  token_type: 'bearer' as const,
});

const accountParams = uuidParams('account_id');

/** The `service-accounts` group (docs/service-accounts.md): machine identities for CI and integrations. */
export function createServiceAccountsRoutes(deps: AppDeps): RouteGroup {
  const { db } = deps;
  return new RouteGroup('service-accounts')
    .post(
      '/api/service-accounts',
      {
        summary:
          'Create a service account: a user of kind service (no password, never signs in) with the given role, and its bearer token `dls_…`, shown in this answer only (only its sha256 is kept)',
        access: 'admin',
        body: { name: 'ServiceAccountIn', schema: ServiceAccountIn },
        successStatus: 201,
        statuses: { 409: 'the name (or its e-mail <name>@service.invalid) is taken' },
      },
      async ({ body, principal, req }) => {
        const { account, token } = await createServiceAccount(db, body, actorOf(principal, req));
        return withToken(account, token);
      },
    )
    .get(
      '/api/service-accounts',
      {
        summary:
          'Service accounts in creation order (revoked ones included), each with its token prefix and when it was created, rotated, revoked and last used; never a token',
        access: 'admin',
        query: ServiceAccountsQuery,
      },
      async ({ query }) => {
        const { page, next_cursor } = idPage(await listServiceAccounts(db, query), query.limit);
        return { items: page.map((a) => serviceAccountOut(a)), next_cursor };
      },
    )
    .post(
      '/api/service-accounts/{account_id}/revoke',
      {
        summary:
          'Revoke a service account for good: its tokens (current and one in a rotation grace) are refused from the next request on, in every API process',
        access: 'admin',
        params: accountParams,
        statuses: { 404: 'no such service account', 409: 'already revoked' },
      },
      async ({ params, principal, req }) =>
        serviceAccountOut(await revokeServiceAccount(db, params.account_id, actorOf(principal, req))),
    )
    .post(
      '/api/service-accounts/{account_id}/rotate',
      {
        summary:
          'Issue a new token (shown in this answer only). The old one stops at once, or after `grace_seconds` (at most 24 h) so a deployment can switch without an outage',
        access: 'admin',
        params: accountParams,
        body: { name: 'ServiceAccountRotateIn', schema: ServiceAccountRotateIn },
        statuses: { 404: 'no such service account', 409: 'revoked, or rotated by another request meanwhile' },
      },
      async ({ params, body, principal, req }) => {
        const { account, token } = await rotateServiceAccount(
          db,
          params.account_id,
          body.grace_seconds,
          actorOf(principal, req),
        );
        return withToken(account, token);
      },
    );
}

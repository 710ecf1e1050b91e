import { createHash, randomUUID } from 'node:crypto';
import { useApiForFile } from '../testkit/api';
import { capturedLogger, expectSecretsKept } from './helpers/identity';

/**
 * Service accounts (docs/service-accounts.md) against the real API and PostgreSQL: a CI-like client
 * calls routes with its token, every use is in the activity log, revoking and rotating take effect
 * from the next request, and no token is ever shown again after the answer that issued it.
 */
const API_MAX = 100;
const logs = capturedLogger();
const ctx = useApiForFile(
  {
    // A window of an hour and a budget no test but the limiter's own reaches.
    APP_RATE_LIMIT__API_MAX: String(API_MAX),
    APP_RATE_LIMIT__API_WINDOW_SECONDS: '3600',
  },
  logs.logger,
);
/** Every response body read, and every credential of a service user: searched for at the end. */
const responses: string[] = [];
const secrets = { never: [] as string[], shownOnce: [] as string[] };

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

const call = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await ctx.api.call(method, path, { token, ...(body === undefined ? {} : { body }) });
  responses.push(JSON.stringify(res.body));
  if (typeof res.body?.token === 'string' && res.body.token.startsWith('dls_'))
    secrets.shownOnce.push(res.body.token);
  return res;
};

async function createAccount(name: string, role = 'reviewer', description: string | null = null) {
  const res = await call('POST', '/api/service-accounts', ctx.token.admin, { name, role, description });
  expect(res.status).toBe(201);
  return res.body as { id: string; user_id: string; token: string; token_prefix: string; email: string };
}

/** The account's `service_account.used` rows, once `count` of them are in (they are written after the answer). */
async function usesOf(accountId: string, count: number) {
  for (let i = 0; i < 400; i++) {
    const rows = await ctx.api.deps.db.auditLog.findMany({
      where: { action: 'service_account.used', subjectId: accountId },
      orderBy: { id: 'asc' },
    });
    if (rows.length >= count) return rows;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`fewer than ${count} uses of ${accountId} were recorded`);
}

describe('route security', () => {
  // Every row names its body (undefined too): jest hands a shorter row's test a `done` instead.
  const routes: Array<[string, string, unknown]> = [
    ['POST', '/api/service-accounts', { name: 'x', role: 'annotator' }],
    ['GET', '/api/service-accounts', undefined],
    ['POST', `/api/service-accounts/${randomUUID()}/revoke`, undefined],
    ['POST', `/api/service-accounts/${randomUUID()}/rotate`, {}],
  ];

  it.each(routes)('%s %s answers 401 without a token and 403 below admin', async (method, path, body) => {
    expect((await ctx.api.call(method, path, { body })).status).toBe(401);
    expect((await call(method, path, ctx.token.reviewer, body)).status).toBe(403);
  });

  it('answers 403 to a service account whose role is below admin, and lets an admin one manage accounts', async () => {
    const reviewerBot = await createAccount('reviewer-bot', 'reviewer');
    expect((await call('GET', '/api/service-accounts', reviewerBot.token)).status).toBe(403);
    const adminBot = await createAccount('admin-bot', 'admin');
    expect((await call('GET', '/api/service-accounts', adminBot.token)).status).toBe(200);
  });
});

describe('create and use', () => {
  it('creates a service user without a password, keeps only the token hash, and shows the token once', async () => {
    const created = await createAccount('ci-pipeline', 'reviewer', 'GitHub Actions, nightly ingest');
    expect(created.token).toMatch(/^dls_[A-Za-z0-9_-]{43}$/);
    expect(created).toMatchObject({
      name: 'ci-pipeline',
      description: 'GitHub Actions, nightly ingest',
      role: 'reviewer',
      state: 'active',
      email: 'ci-pipeline@service.invalid',
      token_prefix: created.token.slice(0, 12),
      token_type: 'bearer',
      last_used_at: null,
    });
    const row = await ctx.api.deps.db.serviceAccount.findUniqueOrThrow({
      where: { id: created.id },
      include: { user: true },
    });
    expect(row.tokenHash).toBe(sha256(created.token));
    expect(JSON.stringify(row)).not.toContain(created.token.slice(4));
    expect(row.user).toMatchObject({
      kind: 'service',
      passwordHash: null,
      role: 'reviewer',
      mfaEnabled: false,
    });

    const list = await call('GET', '/api/service-accounts', ctx.token.admin);
    expect(list.status).toBe(200);
    const text = JSON.stringify(list.body);
    expect(text).not.toContain(created.token.slice(4));
    expect(text).not.toContain(row.tokenHash);
    expect(list.body.items.find((a: { id: string }) => a.id === created.id)).toMatchObject({
      token_prefix: created.token_prefix,
      state: 'active',
    });
    expect(list.body.items.every((a: object) => !('token' in a))).toBe(true);

    // Not a person: the users list leaves it out, and it cannot sign in with a password.
    const users = await call('GET', '/api/users', ctx.token.reviewer);
    expect(users.body.items.map((u: { id: string }) => u.id)).not.toContain(created.user_id);
    const login = await ctx.api.call('POST', '/api/auth/login', {
      body: { email: created.email, password: 'any passphrase at all' },
    });
    expect(login.status).toBe(401);
  });

  it('refuses a second account of the same name, and malformed names and roles', async () => {
    await createAccount('dup-name');
    const again = await call('POST', '/api/service-accounts', ctx.token.admin, {
      name: 'dup-name',
      role: 'annotator',
    });
    expect(again.status).toBe(409);
    for (const body of [
      { name: 'Has Spaces', role: 'annotator' },
      { name: '-lead', role: 'annotator' },
      { name: 'ok-name', role: 'owner' },
      { name: 'ok-name' },
      { name: 'ok-name', role: 'annotator', token: 'mine' },
    ])
      expect((await call('POST', '/api/service-accounts', ctx.token.admin, body)).status).toBe(422);
  });

  it('lets a CI client call routes with its token as its role allows, recording every use', async () => {
    const ci = await createAccount('ci-reader', 'reviewer');
    const me = await call('GET', '/api/users/me', ci.token);
    expect(me.status).toBe(200);
    expect(me.body).toMatchObject({ id: ci.user_id, role: 'reviewer', email: 'ci-reader@service.invalid' });
    const imports = await call('GET', '/api/imports?limit=5', ci.token);
    expect(imports.status).toBe(200);
    const forbidden = await call('POST', `/api/users/${ci.user_id}/revoke-tokens`, ci.token);
    expect(forbidden.status).toBe(403);

    // Written after each answer, so not necessarily in request order.
    const uses = await usesOf(ci.id, 3);
    const byRequest = [me, imports, forbidden].map((r) => r.headers.get('x-request-id')!);
    expect(uses.map((u) => u.requestId).sort()).toEqual([...byRequest].sort());
    expect(
      byRequest
        .map((id) => uses.find((u) => u.requestId === id))
        .map((u) => ({ actorId: u!.actorId, detail: u!.detail })),
    ).toEqual([
      {
        actorId: ci.user_id,
        detail: { method: 'GET', route: '/api/users/me', status: 200, token: 'current' },
      },
      {
        actorId: ci.user_id,
        detail: { method: 'GET', route: '/api/imports', status: 200, token: 'current' },
      },
      {
        actorId: ci.user_id,
        detail: { method: 'POST', route: '/api/users/:user_id/revoke-tokens', status: 403, token: 'current' },
      },
    ]);
    const listed = await call('GET', '/api/service-accounts', ctx.token.admin);
    const mine = listed.body.items.find((a: { id: string }) => a.id === ci.id);
    expect(mine.last_used_at).not.toBeNull();
  });

  it('refuses a JWT issued for a service user: its only credential is its service token', async () => {
    const bot = await createAccount('jwt-bot', 'admin');
    const jwt = await ctx.api.deps.tokens.issue(bot.user_id, 0);
    secrets.never.push(jwt.token);
    expect((await call('GET', '/api/users/me', jwt.token)).status).toBe(401);
    expect((await call('POST', `/api/users/${bot.user_id}/token`, ctx.token.admin)).status).toBe(404);
  });

  it('counts a service account against the API rate limit like a user', async () => {
    const busy = await createAccount('busy-bot', 'annotator');
    let first429: { status: number; headers: Headers } | undefined;
    // The budget is API_MAX per window; a window boundary inside the loop at most doubles it.
    for (let i = 0; i < 2 * API_MAX + 1 && !first429; i++) {
      const res = await call('GET', '/api/users/me', busy.token);
      if (res.status === 429) first429 = res;
      else expect(res.status).toBe(200);
    }
    expect(first429?.headers.get('retry-after')).toMatch(/^\d+$/);
  });
});

describe('revoke', () => {
  it('refuses the token from the very next request, and is final', async () => {
    const bot = await createAccount('revoked-bot', 'reviewer');
    expect((await call('GET', '/api/users/me', bot.token)).status).toBe(200);
    await usesOf(bot.id, 1);
    const revoked = await call('POST', `/api/service-accounts/${bot.id}/revoke`, ctx.token.admin);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: bot.id, state: 'revoked' });
    expect(revoked.body.revoked_at).not.toBeNull();
    expect(revoked.body).not.toHaveProperty('token');

    const refused = await call('GET', '/api/users/me', bot.token);
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toBe('this service account was revoked');
    expect((await call('POST', `/api/service-accounts/${bot.id}/revoke`, ctx.token.admin)).status).toBe(409);
    expect((await call('POST', `/api/service-accounts/${bot.id}/rotate`, ctx.token.admin, {})).status).toBe(
      409,
    );
    const audit = await ctx.api.deps.db.auditLog.findMany({
      where: { subjectId: bot.id, action: { startsWith: 'service_account.' } },
      orderBy: { id: 'asc' },
    });
    expect(audit.map((a) => a.action)).toEqual([
      'service_account.created',
      'service_account.used',
      'service_account.revoked',
    ]);
  });

  it('answers 404 for an unknown account and 422 for a malformed id', async () => {
    expect((await call('POST', `/api/service-accounts/${randomUUID()}/revoke`, ctx.token.admin)).status).toBe(
      404,
    );
    expect(
      (await call('POST', `/api/service-accounts/${randomUUID()}/rotate`, ctx.token.admin, {})).status,
    ).toBe(404);
    expect((await call('POST', '/api/service-accounts/not-an-id/revoke', ctx.token.admin)).status).toBe(422);
  });
});

describe('rotate', () => {
  it('without a grace period: the old token stops at once, the new one works', async () => {
    const bot = await createAccount('rotate-now', 'annotator');
    const rotated = await call('POST', `/api/service-accounts/${bot.id}/rotate`, ctx.token.admin, {});
    expect(rotated.status).toBe(200);
    expect(rotated.body.token).toMatch(/^dls_/);
    expect(rotated.body.token).not.toBe(bot.token);
    expect(rotated.body).toMatchObject({
      token_prefix: rotated.body.token.slice(0, 12),
      previous_token_expires_at: null,
    });
    expect(rotated.body.rotated_at).not.toBeNull();
    const old = await call('GET', '/api/users/me', bot.token);
    expect(old.status).toBe(401);
    expect(old.body.detail).toBe('token is not valid');
    expect((await call('GET', '/api/users/me', rotated.body.token)).status).toBe(200);
  });

  it('with a grace period: both tokens work until it ends, then only the new one', async () => {
    const bot = await createAccount('rotate-grace', 'annotator');
    const rotated = await call('POST', `/api/service-accounts/${bot.id}/rotate`, ctx.token.admin, {
      grace_seconds: 2,
    });
    expect(rotated.status).toBe(200);
    const graceEnds = new Date(rotated.body.previous_token_expires_at as string);
    expect(graceEnds.getTime()).toBeGreaterThan(Date.now());
    expect((await call('GET', '/api/users/me', bot.token)).status).toBe(200);
    expect((await call('GET', '/api/users/me', rotated.body.token)).status).toBe(200);
    const uses = await usesOf(bot.id, 2);
    expect(uses.map((u) => (u.detail as { token: string }).token).sort()).toEqual(['current', 'previous']);

    while (Date.now() <= graceEnds.getTime()) await new Promise((r) => setTimeout(r, 100));
    const after = await call('GET', '/api/users/me', bot.token);
    expect(after.status).toBe(401);
    expect(after.body.detail).toBe('this token was replaced by a rotation and its grace period has ended');
    expect((await call('GET', '/api/users/me', rotated.body.token)).status).toBe(200);
    const listed = await call('GET', '/api/service-accounts', ctx.token.admin);
    expect(listed.body.items.find((a: { id: string }) => a.id === bot.id)).toMatchObject({
      previous_token_expires_at: null,
    });
  });

  it('refuses a grace period over 24 hours or below zero', async () => {
    const bot = await createAccount('rotate-bounds', 'annotator');
    for (const grace_seconds of [86_401, -1, 1.5, '60'])
      expect(
        (await call('POST', `/api/service-accounts/${bot.id}/rotate`, ctx.token.admin, { grace_seconds }))
          .status,
      ).toBe(422);
    expect((await call('GET', '/api/users/me', bot.token)).status).toBe(200);
  });
});

it('refuses malformed and unknown service tokens without telling them apart', async () => {
  for (const token of ['dls_', 'dls_short', `dls_${'A'.repeat(43)}`, `dls_${'A'.repeat(44)}`]) {
    const res = await call('GET', '/api/users/me', token);
    expect(res.status).toBe(401);
    expect(res.body.detail).toBe('token is not valid');
  }
});

describe('after all of the above', () => {
  it('kept every service token, created, used, rotated or refused, out of the API log and out of any later response', () => {
    // Each token was sent as a bearer many times; the log has those requests, never the token.
    expect(logs.text()).toMatch(/"url":"\/api\/service-accounts\/[0-9a-f-]{36}\/rotate"/);
    expect(secrets.shownOnce.length).toBeGreaterThan(10);
    expectSecretsKept(logs.text(), responses, secrets);
  });
});

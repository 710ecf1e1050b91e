import { z } from 'zod';
import { createTokenIssuer } from '../api/auth/tokens';
import { createUserWithToken, startTestApi, type TestApi } from '../testkit/api';
import { createFrame } from '../testkit/annotations';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';

/** Spec Authentication 1–6 and 9, each against the real app, PostgreSQL, Temporal and MinIO. */

let db: TestDatabase;
let api: TestApi;
const password = 'a long enough passphrase';

beforeAll(async () => {
  db = await createTestDatabase();
  api = await startTestApi(testConfig({ DATABASE_URL: db.url }));
});
afterAll(async () => {
  await api?.close();
  await db?.drop();
});

async function login(email: string): Promise<string> {
  const res = await api.call('POST', '/api/auth/login', { body: { email, password } });
  expect(res.status).toBe(200);
  return res.body.token as string;
}

describe('first user and user creation (Authentication 5)', () => {
  it('lets exactly one of several racing tokenless requests create the first user, as admin', async () => {
    const attempts = await Promise.all(
      [0, 1, 2, 3, 4].map((i) =>
        api.call('POST', '/api/users', {
          body: { email: `first${i}@example.org`, name: `First ${i}`, password, role: 'annotator' },
        }),
      ),
    );
    const created = attempts.filter((a) => a.status === 201);
    expect(created).toHaveLength(1);
    expect(created[0]!.body.role).toBe('admin');
    // The losers either saw the user table filled (401: now a token is needed) or lost the lock (409).
    for (const a of attempts.filter((x) => x.status !== 201)) expect([401, 409]).toContain(a.status);
    expect(JSON.stringify(created[0]!.body)).not.toMatch(/password|hash/i);
  });

  it('refuses tokenless creation once a user exists', async () => {
    const res = await api.call('POST', '/api/users', {
      body: { email: 'late@example.org', name: 'Late', password },
    });
    expect(res.status).toBe(401);
  });
});

describe('with an admin, a reviewer and an annotator', () => {
  let admin: string;
  let reviewer: string;
  let annotator: string;
  let annotatorId: string;

  beforeAll(async () => {
    const first = await api.deps.db.user.findFirstOrThrow({ where: { role: 'admin' } });
    admin = await login(first.email);
    for (const role of ['reviewer', 'annotator'] as const) {
      const res = await api.call('POST', '/api/users', {
        token: admin,
        body: { email: `${role}@example.org`, name: role, password, role },
      });
      expect(res.status).toBe(201);
      expect(res.body.role).toBe(role);
      if (role === 'annotator') annotatorId = res.body.id;
    }
    reviewer = await login('reviewer@example.org');
    annotator = await login('annotator@example.org');
  });

  it('answers 401 without a valid token on every declared non-public route (fail closed, Authentication 1)', async () => {
    const protectedRoutes = api.routes.filter(
      (r) => r.spec.access !== 'public' && r.spec.access !== 'bootstrap',
    );
    expect(protectedRoutes.length).toBeGreaterThan(5);
    for (const route of protectedRoutes) {
      const path = route.path.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
      const none = await api.call(route.method.toUpperCase(), path);
      expect({ route: route.path, status: none.status }).toEqual({ route: route.path, status: 401 });
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="drivelab"');
      const forged = await api.call(route.method.toUpperCase(), path, { token: 'not.a.token' });
      expect({ route: route.path, status: forged.status }).toEqual({ route: route.path, status: 401 });
      expect(forged.headers.get('www-authenticate')).toBe('Bearer realm="drivelab", error="invalid_token"');
    }
  });

  it('answers a malformed id in any path 422 naming the parameter, before the handler runs', async () => {
    const withIds = api.routes.flatMap((route) =>
      Object.entries(route.spec.params?.shape ?? {})
        .filter(
          ([, schema]) => (z.toJSONSchema(schema as z.ZodType) as { format?: string }).format === 'uuid',
        )
        .map(([name]) => ({ route, name })),
    );
    expect(withIds.length).toBeGreaterThan(40);
    for (const { route, name } of withIds) {
      const path = route.path.replace(/\{([^}]+)\}/g, (_, p: string) =>
        p === name ? 'not-a-uuid' : '00000000-0000-4000-8000-000000000000',
      );
      const res = await api.call(route.method.toUpperCase(), path, { token: admin });
      expect({
        route: `${route.method} ${route.path}`,
        status: res.status,
        field: res.body?.errors?.[0]?.field,
      }).toEqual({
        route: `${route.method} ${route.path}`,
        status: 422,
        field: `path.${name}`,
      });
      expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    }
  });

  it('keeps health and readiness public', async () => {
    expect((await api.call('GET', '/api/health')).status).toBe(200);
    const ready = await api.call('GET', '/api/readyz');
    expect(ready.status).toBe(200);
    expect(ready.body.checks).toEqual({
      database: expect.objectContaining({ ok: true }),
      temporal: expect.objectContaining({ ok: true }),
      storage: expect.objectContaining({ ok: true }),
    });
  });

  it('answers unknown /api paths 401 without a token and 404 with one', async () => {
    expect((await api.call('GET', '/api/no/such/route')).status).toBe(401);
    const res = await api.call('GET', '/api/no/such/route', { token: annotator });
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/application\/problem\+json/);
  });

  it('checks roles per route: annotator < reviewer < admin (Authentication 2)', async () => {
    expect((await api.call('GET', '/api/users', { token: annotator })).status).toBe(403);
    expect((await api.call('GET', '/api/users', { token: reviewer })).status).toBe(200);
    const forbidden = await api.call('POST', `/api/users/${annotatorId}/revoke-tokens`, { token: reviewer });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.detail).toMatch(/admin/);
    expect(
      (
        await api.call('POST', '/api/users', {
          token: reviewer,
          body: { email: 'x@example.org', name: 'x', password },
        })
      ).status,
    ).toBe(403);
    expect((await api.call('GET', '/api/users/me', { token: annotator })).body.role).toBe('annotator');
  });

  it('issues 12-hour tokens, refuses expired ones, and refresh rolls the token (Authentication 4)', async () => {
    const res = await api.call('POST', '/api/auth/login', {
      body: { email: 'annotator@example.org', password },
    });
    const lifetimeH = (Date.parse(res.body.expires_at) - Date.now()) / 3.6e6;
    expect(lifetimeH).toBeGreaterThan(11.9);
    expect(lifetimeH).toBeLessThanOrEqual(12);

    const cfg = api.deps.config.auth;
    const user = await api.deps.db.user.findUniqueOrThrow({ where: { id: annotatorId } });
    const past = createTokenIssuer({
      secret: cfg.tokenSecret,
      issuer: cfg.issuer,
      ttlHours: 12,
      now: () => new Date(Date.now() - 13 * 3.6e6),
    });
    const expired = await past.issue(user.id, user.tokenVersion);
    const refused = await api.call('GET', '/api/users/me', { token: expired.token });
    expect(refused.status).toBe(401);
    expect(refused.body.detail).toMatch(/expired/);

    const otherKey = createTokenIssuer({ secret: 'x'.repeat(32), issuer: cfg.issuer, ttlHours: 12 });
    expect(
      (
        await api.call('GET', '/api/users/me', {
          token: (await otherKey.issue(user.id, user.tokenVersion)).token,
        })
      ).status,
    ).toBe(401);

    const rolled = await api.call('POST', '/api/auth/refresh', { token: res.body.token });
    expect(rolled.status).toBe(200);
    expect(rolled.body.token).not.toBe(res.body.token);
    expect(Date.parse(rolled.body.expires_at)).toBeGreaterThanOrEqual(Date.parse(res.body.expires_at));
    expect((await api.call('GET', '/api/users/me', { token: rolled.body.token })).status).toBe(200);
  });

  it('revoke-tokens kills every outstanding token of that user and only theirs (Authentication 4)', async () => {
    const second = await login('annotator@example.org');
    const refreshed = (await api.call('POST', '/api/auth/refresh', { token: second })).body.token as string;
    const res = await api.call('POST', `/api/users/${annotatorId}/revoke-tokens`, { token: admin });
    expect(res.status).toBe(200);
    for (const dead of [annotator, second, refreshed]) {
      const r = await api.call('GET', '/api/users/me', { token: dead });
      expect(r.status).toBe(401);
      expect(r.body.detail).toMatch(/revoked/);
    }
    expect((await api.call('GET', '/api/users/me', { token: reviewer })).status).toBe(200);
    annotator = await login('annotator@example.org');
    expect((await api.call('GET', '/api/users/me', { token: annotator })).status).toBe(200);
    expect(
      (
        await api.call('POST', '/api/users/00000000-0000-4000-8000-000000000000/revoke-tokens', {
          token: admin,
        })
      ).status,
    ).toBe(404);
  });

  it('lets an admin mint a token for a user, recorded with the admin as actor', async () => {
    const adminUser = await api.deps.db.user.findFirstOrThrow({ where: { role: 'admin' } });
    const minted = await api.call('POST', `/api/users/${annotatorId}/token`, { token: admin });
    expect(minted.status).toBe(200);
    const me = await api.call('GET', '/api/users/me', { token: minted.body.token });
    expect(me.body.id).toBe(annotatorId);
    const entry = await api.deps.db.auditLog.findFirst({
      where: { action: 'user.token.minted', subjectId: annotatorId },
    });
    expect(entry?.actorId).toBe(adminUser.id);
    expect((await api.call('POST', `/api/users/${annotatorId}/token`, { token: reviewer })).status).toBe(403);
  });

  it('refuses a wrong password without saying which part was wrong', async () => {
    const wrongPassword = await api.call('POST', '/api/auth/login', {
      body: { email: 'reviewer@example.org', password: 'nope nope nope' },
    });
    const noUser = await api.call('POST', '/api/auth/login', {
      body: { email: 'ghost@example.org', password: 'nope nope nope' },
    });
    expect(wrongPassword.status).toBe(401);
    expect(noUser.status).toBe(401);
    expect(wrongPassword.body.detail).toBe(noUser.body.detail);
  });

  it('accepts ?token= only on GET of the event streams (Authentication 6)', async () => {
    const ctrl = new AbortController();
    const res = await fetch(`${api.url}/api/events/system?token=${encodeURIComponent(reviewer)}`, {
      signal: ctrl.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/text\/event-stream/);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: ready')) text += new TextDecoder().decode((await reader.read()).value);
    ctrl.abort();

    const elsewhere = await api.call('GET', `/api/users/me?token=${encodeURIComponent(reviewer)}`);
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.body.detail).toMatch(/query string/);
  });

  it('has no dev-login outside APP_ENV=local (Authentication 5)', async () => {
    expect((await api.call('POST', '/api/auth/dev-login', { token: annotator })).status).toBe(404);
    expect((await api.call('POST', '/api/auth/dev-login')).status).toBe(401);
  });

  it('answers malformed bodies with problem+json naming the field', async () => {
    const bad = await api.call('POST', '/api/users', {
      token: admin,
      body: { email: 'not-an-email', name: 'x', password, colour: 'red' },
    });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect(bad.body.errors.map((e: { field: string }) => e.field).sort()).toEqual([
      'body.colour',
      'body.email',
    ]);
    const notJson = await api.call('POST', '/api/auth/login', { rawBody: '{"email":' });
    expect(notJson.status).toBe(400);
    expect(notJson.body.detail).toMatch(/not valid JSON/);
    const before = await api.deps.db.user.count();
    expect(
      (
        await api.call('POST', '/api/users', {
          token: admin,
          body: { email: 'admin-dup@example.org', name: 'x', password: 'short' },
        })
      ).status,
    ).toBe(422);
    expect(await api.deps.db.user.count()).toBe(before);
  });

  it('serves the OpenAPI document, generated from the request schemas, to token holders', async () => {
    expect((await api.call('GET', '/api/openapi.json')).status).toBe(401);
    const doc = await api.call('GET', '/api/openapi.json', { token: annotator });
    expect(doc.status).toBe(200);
    expect(doc.body.components.schemas.UserCreateIn.required).toEqual(
      expect.arrayContaining(['email', 'name', 'password']),
    );
    expect(doc.body.paths['/api/users/{user_id}/token'].post['x-required-role']).toBe('admin');
    expect(doc.body.paths['/api/health'].get.security).toEqual([]);
  });

  it('serves Prometheus metrics at /metrics and /api/metrics to token holders', async () => {
    expect((await api.call('GET', '/metrics')).status).toBe(401);
    const m = await api.call('GET', '/api/metrics', { token: annotator });
    expect(m.status).toBe(200);
    expect(m.body).toMatch(/http_request_duration_seconds_bucket\{.*route="\/api\/users\/me"/);
    expect((await api.call('GET', '/metrics', { token: annotator })).body).toMatch(
      /process_cpu_user_seconds_total/,
    );
  });
});

describe('dev-login in a local environment', () => {
  it('mints an admin token', async () => {
    const local = await startTestApi(testConfig({ DATABASE_URL: db.url, APP_ENV: 'local' }));
    try {
      const res = await local.call('POST', '/api/auth/dev-login');
      expect(res.status).toBe(200);
      const me = await local.call('GET', '/api/users/me', { token: res.body.token });
      expect(me.body.role).toBe('admin');
    } finally {
      await local.close();
    }
  });
});

describe('media tokens (POST /api/auth/media-token)', () => {
  it('read frame images and crops from the query string, and nothing else, until the user is revoked', async () => {
    const admin = await createUserWithToken(api.deps, 'admin');
    const reviewer = await createUserWithToken(api.deps, 'reviewer');
    const { frame } = await createFrame(api.deps);
    const object = await api.deps.db.annoObject.create({
      data: { frameId: frame.id, bbox: [100, 100, 200, 200], classId: 1, source: 'human', state: 'accepted' },
    });
    const minted = await api.call('POST', '/api/auth/media-token', { token: reviewer.token });
    expect(minted.status).toBe(200);
    expect(minted.body).toMatchObject({ token_type: 'media', media_token: expect.any(String) });
    expect(Date.parse(minted.body.expires_at) - Date.now()).toBeLessThanOrEqual(15 * 60_000);
    const media = encodeURIComponent(minted.body.media_token);

    const crop = await fetch(`${api.url}/api/objects/${object.id}/crop?media_token=${media}&pad=0.1`);
    expect(crop.status).toBe(200);
    expect(crop.headers.get('content-type')).toBe('image/jpeg');
    const image = await fetch(
      `${api.url}/api/frames/${frame.id}/image?variant=original&media_token=${media}`,
    );
    expect(image.status).toBe(200);

    // Anywhere else it is refused, in the query string or as a bearer token.
    for (const attempt of [
      api.call('GET', `/api/users/me?media_token=${media}`),
      api.call('GET', '/api/users/me', { token: minted.body.media_token }),
      api.call('GET', `/api/objects/${object.id}`, { token: minted.body.media_token }),
      api.call('POST', '/api/auth/media-token', { token: minted.body.media_token }),
      api.call('GET', `/api/events/jobs?token=${media}`),
    ]) {
      const res = await attempt;
      expect(res.status).toBe(401);
      expect(res.body.detail).toMatch(/media token reads only frame images and object crops/);
    }
    // Revoking the user's tokens revokes their media tokens too.
    await api.call('POST', `/api/users/${reviewer.userId}/revoke-tokens`, { token: admin.token });
    expect((await fetch(`${api.url}/api/objects/${object.id}/crop?media_token=${media}`)).status).toBe(401);
  });
});

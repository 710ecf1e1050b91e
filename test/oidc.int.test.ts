import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';
import { createApp } from '../api/app';
import { closeAppDeps, createAppDeps, type AppDeps } from '../api/deps';
import { startTestApi, type TestApi } from '../testkit/api';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { testConfig } from '../testkit/stack';
import { capturedLogger } from './helpers/identity';

/**
 * OIDC sign-in (docs/oidc.md) end to end against a real OpenID Connect provider on loopback:
 * panva's certified `oidc-provider`, with this API registered as a confidential client, RS256
 * ID tokens from a key made for the run, PKCE required, and its own development login and consent
 * pages, which the test drives as a browser would: following redirects, keeping cookies, posting
 * the forms. Two API processes share one database, as behind a load balancer.
 */

const CLIENT_ID = 'drivelab';
const CLIENT_SECRET = `oidc-${randomBytes(18).toString('base64url')}`;
const STATE_COOKIE = 'drivelab_oidc_state';

/** The provider's accounts: login → claims. */
const ACCOUNTS: Record<string, Record<string, unknown>> = {
  alice: { email: 'Alice@Example.org', email_verified: true, name: 'Alice Liddell', groups: ['staff'] },
  boss: { email: 'boss@example.org', email_verified: true, name: 'Ml Boss', groups: ['staff', 'ml-admins'] },
  carol: { email: 'carol@example.org', email_verified: true, name: 'Carol (local account)' },
  mallory: { email: 'mallory@example.org', email_verified: false, name: 'Unverified Mallory' },
  dave: { email: 'dave@example.org', email_verified: true, name: 'Dave' },
  erin: { email: 'erin@example.org', email_verified: true, name: 'Erin' },
  noemail: { name: 'No Mail' },
  mfa: { email: 'mfa-user@example.org', email_verified: true, name: 'Has MFA' },
};

let provider: Provider;
let providerServer: Server;
let issuer: string;
/** Lifetime the provider gives the next authorization codes. */
let codeTtlSeconds = 60;

let db: TestDatabase;
/** Configured, linking by e-mail off (the default), the role claim mapped. */
let apiA: LiveApi;
/** A second process on the same database, linking by e-mail on. */
let apiB: LiveApi;
/** OIDC not configured. */
let bare: TestApi;
const logs = capturedLogger();
/** Every token and code the run sees, which no log line may hold. */
const secretsSeen: string[] = [CLIENT_SECRET];

interface LiveApi {
  url: string;
  deps: AppDeps;
  server: Server;
}

const listen = async (server: Server): Promise<string> => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
};

/** The API on a server that already has its port, so its redirect URI can name it before it is configured. */
async function serveApi(server: Server, env: Record<string, string>): Promise<LiveApi> {
  const deps = await createAppDeps(testConfig({ DATABASE_URL: db.url, ...env }), logs.logger);
  server.on('request', createApp(deps).app);
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, deps, server };
}

beforeAll(async () => {
  db = await createTestDatabase();
  providerServer = createServer();
  issuer = await listen(providerServer);
  const [serverA, serverB] = [createServer(), createServer()];
  const urlA = await listen(serverA);
  await listen(serverB);

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  provider = new Provider(issuer, {
    clients: [
      {
        client_id: CLIENT_ID,
        client_secret: CLIENT_SECRET,
        redirect_uris: [`${urlA}/api/auth/oidc/callback`],
        response_types: ['code'],
        grant_types: ['authorization_code'],
        token_endpoint_auth_method: 'client_secret_basic',
      },
    ],
    jwks: { keys: [{ ...(await exportJWK(privateKey)), alg: 'RS256', use: 'sig' }] },
    cookies: { keys: [randomBytes(32).toString('hex')] },
    pkce: { required: () => true },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
    ttl: {
      AuthorizationCode: () => codeTtlSeconds,
      AccessToken: 600,
      IdToken: 600,
      Grant: 600,
      Interaction: 600,
      Session: 600,
    },
    findAccount: (_ctx, sub) =>
      ACCOUNTS[sub] ? { accountId: sub, claims: () => ({ sub, ...ACCOUNTS[sub] }) } : undefined,
  });
  providerServer.on('request', provider.callback());

  const oidcEnv = {
    APP_OIDC__ISSUER: issuer,
    APP_OIDC__CLIENT_ID: CLIENT_ID,
    APP_OIDC__CLIENT_SECRET: CLIENT_SECRET,
    APP_OIDC__REDIRECT_URI: `${urlA}/api/auth/oidc/callback`,
    APP_OIDC__SCOPES: 'openid email profile groups',
    APP_OIDC__ROLE_CLAIM: 'groups',
    APP_OIDC__ROLE_MAP: '{"ml-admins":"admin","reviewers":"reviewer"}',
  };
  apiA = await serveApi(serverA, oidcEnv);
  // Behind one public address, both processes have the same redirect URI.
  apiB = await serveApi(serverB, { ...oidcEnv, APP_OIDC__LINK_BY_EMAIL: 'true' });
  bare = await startTestApi(testConfig({ DATABASE_URL: db.url }));
});

afterAll(async () => {
  for (const api of [apiA, apiB].filter(Boolean)) {
    api.server.closeAllConnections();
    await new Promise((r) => api.server.close(r));
    await closeAppDeps(api.deps);
  }
  await bare?.close();
  providerServer?.closeAllConnections();
  await new Promise((r) => providerServer?.close(r));
  await db?.drop();
});

/** Cookies of one browser, per host (as browsers do: not per port); enough for these flows. */
class Browser {
  private jar = new Map<string, string>();

  async get(url: URL | string, init: { method?: string; form?: Record<string, string> } = {}) {
    const res = await fetch(url, {
      method: init.method ?? 'GET',
      redirect: 'manual',
      headers: {
        cookie: [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '),
        ...(init.form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      body: init.form ? new URLSearchParams(init.form).toString() : undefined,
    });
    for (const line of res.headers.getSetCookie()) {
      const [pair, ...attrs] = line.split(';');
      const [name, ...value] = pair!.trim().split('=');
      const gone = attrs.some((a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=Thu, 01 Jan 1970/i.test(a));
      if (gone) this.jar.delete(name!);
      else this.jar.set(name!, value.join('='));
    }
    return res;
  }

  cookie(name: string): string | undefined {
    return this.jar.get(name);
  }

  setCookie(name: string, value: string): void {
    this.jar.set(name, value);
  }
}

const location = (res: Response, base: string | URL): URL => {
  expect([302, 303]).toContain(res.status);
  return new URL(res.headers.get('location')!, base);
};

/** GET /api/auth/oidc/start on `api`: the provider URL it redirects to. */
async function start(browser: Browser, api: LiveApi, returnTo?: string): Promise<URL> {
  const res = await browser.get(
    `${api.url}/api/auth/oidc/start${returnTo ? `?return_to=${encodeURIComponent(returnTo)}` : ''}`,
  );
  const to = location(res, api.url);
  expect(to.origin + to.pathname).toBe(`${issuer}/auth`);
  return to;
}

/**
 * At the provider: signs in as `login` on its login page and grants consent, or aborts; the URL
 * the provider finally sends the browser to (the callback, with code or error).
 */
async function atProvider(
  browser: Browser,
  authorizationUrl: URL,
  login: string,
  abort = false,
): Promise<URL> {
  let url = authorizationUrl;
  for (let hop = 0; hop < 12; hop++) {
    if (!url.href.startsWith(issuer)) return url;
    const res = await browser.get(url);
    if (res.status === 200) {
      const page = await res.text();
      const prompt = /name="prompt" value="(\w+)"/.exec(page)?.[1];
      const form: Record<string, string> =
        prompt === 'login' ? { prompt, login, password: 'any' } : { prompt: prompt! };
      const submitted = abort
        ? await browser.get(new URL(`${url.pathname}/abort`, issuer))
        : await browser.get(url, { method: 'POST', form });
      url = location(submitted, issuer);
    } else {
      url = location(res, issuer);
    }
  }
  throw new Error(`no callback after 12 hops at the provider (last ${url.href})`);
}

/** Delivers the provider's callback to `api` (the load balancer's choice) with the browser's cookies. */
async function callback(browser: Browser, api: LiveApi, providerRedirect: URL) {
  const res = await browser.get(`${api.url}${providerRedirect.pathname}${providerRedirect.search}`);
  const code = providerRedirect.searchParams.get('code');
  if (code) secretsSeen.push(code);
  if (res.status !== 302) return { status: res.status, problem: (await res.json()) as { detail: string } };
  const to = location(res, api.url);
  expect(to.origin).toBe(api.url);
  const fragment = new URLSearchParams(to.hash.slice(1));
  const token = fragment.get('token');
  if (token) secretsSeen.push(token);
  return { status: res.status, path: to.pathname + to.search, fragment, token };
}

/** A whole sign-in as `login`: start on `api`, sign in at the provider, call back to `callbackApi`. */
async function signIn(login: string, api = apiA, callbackApi = api, returnTo?: string) {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, api, returnTo), login);
  return callback(browser, callbackApi, redirect);
}

const profileOf = async (api: LiveApi, token: string) => {
  const res = await fetch(`${api.url}/api/auth/profile`, { headers: { authorization: `Bearer ${token}` } });
  expect(res.status).toBe(200);
  return (await res.json()) as {
    user: { id: string; email: string; name: string; role: string };
    sessions: Array<{ method: string; current: boolean }>;
    identities: Array<{ issuer: string; subject: string }>;
  };
};

test('not configured: both routes answer 503 naming every missing setting, and methods says it is off', async () => {
  for (const path of ['/api/auth/oidc/start', '/api/auth/oidc/callback?state=x&code=y']) {
    const res = await bare.call('GET', path);
    expect(res.status).toBe(503);
    for (const name of [
      'APP_OIDC__ISSUER',
      'APP_OIDC__CLIENT_ID',
      'APP_OIDC__CLIENT_SECRET',
      'APP_OIDC__REDIRECT_URI',
    ])
      expect(res.body.detail).toContain(name);
  }
  expect((await bare.call('GET', '/api/auth/methods')).body.oidc).toEqual({ enabled: false });
  const methods = (await (await fetch(`${apiA.url}/api/auth/methods`)).json()) as { oidc: unknown };
  expect(methods.oidc).toEqual({ enabled: true });
});

test('a first sign-in creates the account once, linked by issuer and subject; the next finds it', async () => {
  const first = await signIn('alice', apiA, apiA, '/review?session=7');
  expect(first.status).toBe(302);
  expect(first.path).toBe('/review?session=7');
  expect(first.fragment!.get('token_type')).toBe('bearer');
  const profile = await profileOf(apiA, first.token!);
  expect(profile.user).toMatchObject({
    email: 'alice@example.org',
    name: 'Alice Liddell',
    role: 'annotator',
  });
  expect(profile.identities).toEqual([expect.objectContaining({ issuer, subject: 'alice' })]);
  expect(profile.sessions.find((s) => s.current)?.method).toBe('oidc');

  // Again, finishing on the other API process: the state is shared, the account is the same.
  const second = await signIn('alice', apiA, apiB);
  expect(second.status).toBe(302);
  expect(second.path).toBe('/');
  expect(second.token).not.toBe(first.token);
  expect((await profileOf(apiB, second.token!)).user.id).toBe(profile.user.id);
  expect(await db_count('alice@example.org')).toEqual({ users: 1, identities: 1 });
});

/** Users and linked identities with this e-mail. */
async function db_count(email: string) {
  const { db: prisma } = apiA.deps;
  return {
    users: await prisma.user.count({ where: { email } }),
    identities: await prisma.userIdentity.count({ where: { user: { email } } }),
  };
}

test('the role claim maps a first-time user: ml-admins → admin', async () => {
  const boss = await signIn('boss');
  expect((await profileOf(apiA, boss.token!)).user.role).toBe('admin');
  const audit = await apiA.deps.db.auditLog.findFirst({
    where: { action: 'user.created', detail: { path: ['subject'], equals: 'boss' } },
  });
  expect(audit?.detail).toMatchObject({ via: 'oidc', role: 'admin', role_claim_values: ['ml-admins'] });
});

test('a forged state is refused, and so is a real state in a browser that did not start it', async () => {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, apiA), 'dave');
  const forged = new URL(redirect);
  forged.searchParams.set('state', 'forged-state-value');
  browser.setCookie(STATE_COOKIE, 'forged-state-value');
  const refused = await callback(browser, apiA, forged);
  expect(refused.status).toBe(401);
  expect(refused.problem!.detail).toMatch(/unknown OIDC state/);

  // Login CSRF: someone else's genuine callback link opened in a browser that did not start it.
  const elsewhere = await callback(new Browser(), apiA, redirect);
  expect(elsewhere.status).toBe(401);
  expect(elsewhere.problem!.detail).toMatch(/did not start/);
  expect(await db_count('dave@example.org')).toEqual({ users: 0, identities: 0 });
});

test('a replayed state is refused, on either API process', async () => {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, apiA), 'erin');
  const state = browser.cookie(STATE_COOKIE)!;
  expect((await callback(browser, apiA, redirect)).status).toBe(302);
  // The callback cleared the browser's copy; an attacker replaying the URL brings the cookie back.
  expect(browser.cookie(STATE_COOKIE)).toBeUndefined();
  for (const api of [apiA, apiB]) {
    browser.setCookie(STATE_COOKIE, state);
    const replay = await callback(browser, api, redirect);
    expect(replay.status).toBe(401);
    expect(replay.problem!.detail).toMatch(/already completed/);
  }
});

test('an expired state is refused', async () => {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, apiA), 'dave');
  await apiA.deps.db.oidcState.update({
    where: { state: redirect.searchParams.get('state')! },
    data: { expiresAt: new Date(Date.now() - 1000) },
  });
  const late = await callback(browser, apiA, redirect);
  expect(late.status).toBe(401);
  expect(late.problem!.detail).toMatch(/expired/);
});

test('a code already redeemed (by someone who intercepted it) is refused', async () => {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, apiA), 'dave');
  // The interceptor has everything but the browser: the code, the PKCE verifier, the client's credentials.
  const flight = await apiA.deps.db.oidcState.findUniqueOrThrow({
    where: { state: redirect.searchParams.get('state')! },
  });
  const stolen = await fetch(`${issuer}/token`, {
    method: 'POST',
    headers: {
      authorization: `Basic ${Buffer.from(`${CLIENT_ID}:${CLIENT_SECRET}`).toString('base64')}`,
      'content-type': 'application/x-www-form-urlencoded',
    },
    body: new URLSearchParams({
      grant_type: 'authorization_code',
      code: redirect.searchParams.get('code')!,
      redirect_uri: `${apiA.url}/api/auth/oidc/callback`,
      code_verifier: flight.codeVerifier,
    }),
  });
  expect(stolen.status).toBe(200);
  const reused = await callback(browser, apiA, redirect);
  expect(reused.status).toBe(401);
  expect(reused.problem!.detail).toMatch(/refused the sign-in: invalid_grant/);
  expect(await db_count('dave@example.org')).toEqual({ users: 0, identities: 0 });
});

test('an expired code is refused', async () => {
  codeTtlSeconds = 1;
  const browser = new Browser();
  try {
    const redirect = await atProvider(browser, await start(browser, apiA), 'dave');
    // The provider counts whole seconds: past 2 s the one-second code is surely expired.
    await new Promise((r) => setTimeout(r, 2500));
    const expired = await callback(browser, apiA, redirect);
    expect(expired.status).toBe(401);
    expect(expired.problem!.detail).toMatch(/refused the sign-in: invalid_grant/);
  } finally {
    codeTtlSeconds = 60;
  }
});

test('an ID token for another request (its nonce) is refused', async () => {
  const browser = new Browser();
  const authorizationUrl = await start(browser, apiA);
  // The provider is asked with another nonce, as when an ID token from another request is injected.
  authorizationUrl.searchParams.set('nonce', 'nonce-of-another-request');
  const redirect = await atProvider(browser, authorizationUrl, 'dave');
  const refused = await callback(browser, apiA, redirect);
  expect(refused.status).toBe(401);
  expect(refused.problem!.detail).toMatch(/failed a check.*nonce/);
  expect(await db_count('dave@example.org')).toEqual({ users: 0, identities: 0 });
});

test('the provider refusing (the user aborts) is refused by name', async () => {
  const browser = new Browser();
  const redirect = await atProvider(browser, await start(browser, apiA), 'dave', true);
  expect(redirect.searchParams.get('error')).toBe('access_denied');
  const refused = await callback(browser, apiA, redirect);
  expect(refused.status).toBe(401);
  expect(refused.problem!.detail).toMatch(/refused the sign-in: access_denied/);
});

test('a local account with the same e-mail is linked only where configured, and only when verified', async () => {
  const local = await apiA.deps.db.user.create({
    data: { email: 'carol@example.org', name: 'Carol', role: 'reviewer' },
  });
  const off = await signIn('carol', apiA);
  expect(off.status).toBe(409);
  expect(off.problem!.detail).toMatch(/APP_OIDC__LINK_BY_EMAIL/);

  const on = await signIn('carol', apiB);
  expect(on.status).toBe(302);
  const profile = await profileOf(apiB, on.token!);
  expect(profile.user).toMatchObject({ id: local.id, role: 'reviewer', name: 'Carol' });
  expect(profile.identities).toEqual([expect.objectContaining({ issuer, subject: 'carol' })]);

  await apiA.deps.db.user.create({ data: { email: 'mallory@example.org', name: 'Mallory' } });
  const unverified = await signIn('mallory', apiB);
  expect(unverified.status).toBe(409);
  expect(unverified.problem!.detail).toMatch(/email_verified/);
});

test('a new account needs an e-mail from the provider', async () => {
  const refused = await signIn('noemail');
  expect(refused.status).toBe(422);
  expect(refused.problem!.detail).toMatch(/no e-mail address/);
});

test('an account with MFA on gets an mfa_handle in the fragment, not a token', async () => {
  const first = await signIn('mfa');
  await apiA.deps.db.user.update({ where: { email: 'mfa-user@example.org' }, data: { mfaEnabled: true } });
  const second = await signIn('mfa');
  expect(first.token).toBeTruthy();
  expect(second.status).toBe(302);
  expect(second.token).toBeNull();
  expect(second.fragment!.get('mfa_required')).toBe('true');
  expect(second.fragment!.get('mfa_handle')).toMatch(/^[0-9a-f-]{36}$/);
});

test('return_to must be a path on this site', async () => {
  for (const bad of ['//evil.example/x', 'https://evil.example/', '/\\evil.example', '/a#b', 'review']) {
    const res = await fetch(`${apiA.url}/api/auth/oidc/start?return_to=${encodeURIComponent(bad)}`, {
      redirect: 'manual',
    });
    expect({ bad, status: res.status }).toEqual({ bad, status: 422 });
  }
});

test('no log line holds the client secret, a code or a token', () => {
  expect(secretsSeen.length).toBeGreaterThan(5);
  const text = logs.text();
  for (const secret of secretsSeen)
    expect({ secret, inLogs: text.includes(secret) }).toEqual({ secret, inLogs: false });
});

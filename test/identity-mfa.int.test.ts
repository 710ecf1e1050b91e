import { randomBytes, randomUUID } from 'node:crypto';
import { generate } from 'otplib';
import { createUserWithToken } from '../testkit/api';
import { databaseAccess, startApiProcess, type ApiProcess } from '../testkit/api-process';
import { createTestDatabase, type TestDatabase } from '../testkit/database';
import { expectSecretsKept, freshAddress, identityClient } from './helpers/identity';

/**
 * MFA with TOTP (RFC 6238) end to end, codes computed by otplib as an authenticator app would, on
 * two API processes (`api/server.ts`, each an OS process of its own) sharing one database: the
 * sign-in in flight and every attempt limit (per handle, per account, per address) hold across
 * both (spec Authentication 8), since neither process can see the other's memory.
 */

const ACCOUNT_MAX = 14;
const ADDRESS_MAX = 12;
const HANDLE_MAX = 5;

let db: TestDatabase;
let access: ReturnType<typeof databaseAccess>;
let a: ApiProcess;
let b: ApiProcess;
let adminToken: string;
const { call, responses } = identityClient();
const secrets = { never: [] as string[], shownOnce: [] as string[] };

beforeAll(async () => {
  db = await createTestDatabase();
  const env = {
    APP_AUTH__MFA_CHALLENGE_MAX_ATTEMPTS: String(HANDLE_MAX),
    APP_AUTH__MFA_ACCOUNT_MAX: String(ACCOUNT_MAX),
    APP_AUTH__MFA_ADDRESS_MAX: String(ADDRESS_MAX),
    // Every line either process writes, down to trace, is searched for secrets at the end.
    APP_LOG__LEVEL: 'trace',
  };
  [a, b] = await Promise.all([startApiProcess(db.url, env), startApiProcess(db.url, env)]);
  access = databaseAccess(db.url);
  adminToken = (await createUserWithToken(access, 'admin')).token;
}, 120_000);
afterAll(async () => {
  await Promise.all([a?.stop(), b?.stop(), access?.close()]);
  await db?.drop();
});

const now = () => Math.floor(Date.now() / 1000);
/** The code an authenticator shows `offset` seconds from now; the API accepts one step either side. */
const code = (secret: string, offset = 0) => generate({ secret, epoch: now() + offset });
/** A code of the right secret from ten minutes ago: well outside the window, so wrong. */
const staleCode = (secret: string) => code(secret, -600);

let people = 0;
async function signedInPerson(): Promise<{ id: string; email: string; password: string; token: string }> {
  people += 1;
  const email = `mfa${people}@example.org`;
  const password = `pass ${randomBytes(6).toString('hex')} phrase`;
  secrets.never.push(password);
  const created = await call(a, 'POST', '/api/users', {
    token: adminToken,
    body: { email, name: `MFA ${people}`, password },
  });
  expect(created.status).toBe(201);
  const token = await passwordStep(a, email, password);
  expect(token.body.token).toEqual(expect.any(String));
  secrets.shownOnce.push(token.body.token);
  return { id: created.body.id, email, password, token: token.body.token };
}

const passwordStep = async (api: ApiProcess, email: string, password: string, from = freshAddress()) => {
  const res = await call(api, 'POST', '/api/auth/login', { body: { email, password }, from });
  expect(res.status).toBe(200);
  return res;
};

/** The password step of an account with MFA on: a handle and no token. */
async function handleFor(api: ApiProcess, email: string, password: string, from?: string): Promise<string> {
  const res = await passwordStep(api, email, password, from);
  expect(res.body).toEqual({
    mfa_required: true,
    mfa_handle: expect.any(String),
    mfa_expires_at: expect.any(String),
    attempts_left: HANDLE_MAX,
  });
  return res.body.mfa_handle;
}

async function turnMfaOn(token: string): Promise<{ secret: string; recoveryCodes: string[] }> {
  const setup = await call(a, 'POST', '/api/auth/mfa/setup', { token });
  expect(setup.status).toBe(200);
  secrets.shownOnce.push(setup.body.secret);
  const confirmed = await call(b, 'POST', '/api/auth/mfa/confirm', {
    token,
    body: { code: await code(setup.body.secret) },
  });
  expect(confirmed.status).toBe(200);
  secrets.shownOnce.push(...confirmed.body.recovery_codes);
  return { secret: setup.body.secret, recoveryCodes: confirmed.body.recovery_codes };
}

const secondStep = (api: ApiProcess, handle: string, c: string, from?: string) =>
  call(api, 'POST', '/api/auth/login/mfa', { body: { mfa_handle: handle, code: c }, from });

describe('MFA end to end', () => {
  it('sets up, confirms, signs in with a code once, with a recovery code once, and turns off', async () => {
    const person = await signedInPerson();
    const setup = await call(a, 'POST', '/api/auth/mfa/setup', { token: person.token });
    expect(setup.status).toBe(200);
    const secret = setup.body.secret as string;
    secrets.shownOnce.push(secret);
    expect(setup.body).toMatchObject({ algorithm: 'SHA1', digits: 6, period_seconds: 30 });
    const uri = new URL(setup.body.otpauth_uri);
    expect(uri.protocol).toBe('otpauth:');
    expect(uri.searchParams.get('secret')).toBe(secret);
    expect(uri.searchParams.get('issuer')).toBe('drivelab');
    expect(uri.host).toBe('totp');
    expect(decodeURIComponent(uri.pathname)).toBe(`/drivelab:${person.email}`);
    // The pending state, seen from the other process, without the secret.
    const pending = await call(b, 'POST', '/api/auth/mfa/setup-pending', { token: person.token });
    expect(pending.body).toEqual({ mfa_enabled: false, setup_pending: true, recovery_codes_left: 0 });

    const wrong = await call(b, 'POST', '/api/auth/mfa/confirm', {
      token: person.token,
      body: { code: await staleCode(secret) },
    });
    expect(wrong.status).toBe(422);
    const confirmed = await call(b, 'POST', '/api/auth/mfa/confirm', {
      token: person.token,
      body: { code: await code(secret) },
    });
    expect(confirmed.status).toBe(200);
    const recovery = confirmed.body.recovery_codes as string[];
    secrets.shownOnce.push(...recovery);
    expect(recovery).toHaveLength(10);
    expect(new Set(recovery).size).toBe(10);
    for (const r of recovery)
      expect(r).toMatch(/^[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}-[0-9a-hjkmnp-tv-z]{4}$/);
    expect(
      (await call(a, 'POST', '/api/auth/mfa/confirm', { token: person.token, body: { code: '123456' } }))
        .status,
    ).toBe(409);
    // At rest: the secret sealed, the recovery codes hashed.
    const row = await access.db.user.findUniqueOrThrow({
      where: { id: person.id },
      include: { recoveryCodes: true },
    });
    expect(row.mfaSecret).toMatch(/^v1\./);
    expect(row.mfaSecret).not.toContain(secret);
    expect(row.recoveryCodes.map((r) => r.codeHash).join()).not.toMatch(
      new RegExp(recovery.map((r) => r.replace(/-/g, '')).join('|')),
    );

    // The password alone no longer signs in; the handle made on one process works on the other.
    const handle = await handleFor(a, person.email, person.password);
    const miss = await secondStep(b, handle, await staleCode(secret));
    expect(miss.status).toBe(401);
    expect(miss.body).toMatchObject({ attempts_left: HANDLE_MAX - 1 });
    const next = await code(secret, 30);
    const signedIn = await secondStep(b, handle, next);
    expect(signedIn.status).toBe(200);
    secrets.shownOnce.push(signedIn.body.token);
    expect((await call(a, 'GET', '/api/users/me', { token: signedIn.body.token })).status).toBe(200);
    // A handle is spent by its sign-in, and a code is good once.
    expect((await secondStep(a, handle, await code(secret))).status).toBe(401);
    const replay = await secondStep(a, await handleFor(b, person.email, person.password), next);
    expect(replay.status).toBe(401);
    expect(replay.body.detail).toMatch(/wrong code/);

    const byRecovery = await secondStep(a, await handleFor(a, person.email, person.password), recovery[1]!);
    expect(byRecovery.status).toBe(200);
    secrets.shownOnce.push(byRecovery.body.token);
    const recoveryAgain = await secondStep(
      b,
      await handleFor(b, person.email, person.password),
      recovery[1]!,
    );
    expect(recoveryAgain.status).toBe(401);

    const profile = await call(b, 'GET', '/api/auth/profile', { token: byRecovery.body.token });
    expect(profile.body.mfa).toEqual({ enabled: true, setup_pending: false, recovery_codes_left: 9 });
    expect(profile.body.sessions.filter((s: { method: string }) => s.method === 'mfa')).toHaveLength(2);

    const badDisable = await call(a, 'POST', '/api/auth/mfa/disable', {
      token: person.token,
      body: { code: recovery[1] },
    });
    expect(badDisable.status).toBe(422);
    const disabled = await call(a, 'POST', '/api/auth/mfa/disable', {
      token: person.token,
      body: { code: recovery[2] },
    });
    expect(disabled.status).toBe(200);
    expect(disabled.body).toEqual({ mfa_enabled: false, setup_pending: false, recovery_codes_left: 0 });
    const plain = await passwordStep(b, person.email, person.password);
    expect(plain.body.token).toEqual(expect.any(String));
    secrets.shownOnce.push(plain.body.token);
  });

  it('needs the mfa_handle on the second step', async () => {
    const res = await call(a, 'POST', '/api/auth/login/mfa', { body: { code: '123456' } });
    expect(res.status).toBe(422);
    expect(res.body.errors).toEqual([{ field: 'body.mfa_handle', message: 'required to sign in' }]);
  });
});

describe('limits shared by two API processes', () => {
  it('spends one handle, one account and one address budget whichever process is asked', async () => {
    const person = await signedInPerson();
    const { secret } = await turnMfaOn(person.token);
    const apis = [b, a];

    // Per handle: HANDLE_MAX wrong codes across both processes, then even the right one is refused.
    const handle = await handleFor(a, person.email, person.password);
    for (let i = 0; i < HANDLE_MAX; i++) {
      const miss = await secondStep(apis[i % 2]!, handle, await staleCode(secret));
      expect(miss.body).toMatchObject({ status: 401, attempts_left: HANDLE_MAX - 1 - i });
    }
    const spent = await secondStep(a, handle, await code(secret, 30));
    expect(spent.status).toBe(401);
    expect(spent.body.detail).toMatch(/out of attempts/);

    // Per account: new handles, from other addresses, share what is left of the account's budget
    // (the confirming code spent one of it).
    let spentOnAccount = 1 + HANDLE_MAX;
    let current = { handle: '', left: 0 };
    const nextAttempt = async () => {
      if (current.left === 0)
        current = {
          handle: await handleFor(b, person.email, person.password, freshAddress()),
          left: HANDLE_MAX,
        };
      current.left -= 1;
      return current.handle;
    };
    for (; spentOnAccount < ACCOUNT_MAX; spentOnAccount++)
      expect(
        (await secondStep(apis[spentOnAccount % 2]!, await nextAttempt(), await staleCode(secret))).status,
      ).toBe(401);
    const overAccount = await secondStep(b, await nextAttempt(), await code(secret, 30));
    expect(overAccount.status).toBe(429);
    expect(overAccount.body.detail).toMatch(/mfa-account/);

    // Per address: guesses at handles from one address, any account, across both processes.
    const from = freshAddress();
    for (let i = 0; i < ADDRESS_MAX; i++)
      expect((await secondStep(apis[i % 2]!, randomUUID(), '123456', from)).status).toBe(401);
    for (const api of apis) {
      const overAddress = await secondStep(api, randomUUID(), '123456', from);
      expect(overAddress.status).toBe(429);
      expect(overAddress.body.detail).toMatch(/mfa-address/);
    }
  });
});

describe('after all of the above', () => {
  it('kept every secret out of the logs of both processes and out of any later response', () => {
    for (const api of [a, b]) expect(api.output()).toMatch(/"url":"\/api\/auth\/login\/mfa"/);
    expectSecretsKept(a.output() + b.output(), responses, secrets);
  });
});
